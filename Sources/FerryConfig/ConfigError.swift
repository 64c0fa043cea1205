/// A configuration problem, located in the file: one line that says where, what and what to do.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var column: Int?
    /// The dotted key path, e.g. `remotes.backup.type`.
    public var key: String?
    public var message: String

    public init(file: String, line: Int? = nil, column: Int? = nil, key: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.message = message
    }

    public var description: String {
        var location = file
        if let line {
            location += ":\(line)"
            if let column { location += ":\(column)" }
        }
        let subject = key.map { "'\($0)': " } ?? ""
        return "\(location): \(subject)\(message)".replacingNewlines()
    }
}

extension String {
    /// Folds a message onto one line.
    func replacingNewlines() -> String {
        split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
