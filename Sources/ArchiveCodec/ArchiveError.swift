/// A failure reading or writing an archive, with libarchive's own message as the cause.
public struct ArchiveError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The archive cannot be opened or its bytes do not parse (damaged, cut short, not
        /// an archive at all).
        case damaged
        /// A member's data ended before its declared size, or a source file changed size.
        case truncated
        /// Reading or writing a local file failed.
        case io
        /// The format or a feature is not supported by the linked libarchive, or would need
        /// an external program.
        case unsupported
        /// A member holds more data than the caller allowed (its manifest's size).
        case oversized
    }

    public var code: Code
    public var message: String
    public var path: String?
    public var cause: String?

    public init(_ code: Code, _ message: String, path: String? = nil, cause: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.cause = cause
    }

    public var description: String {
        var text = message
        if let path { text += " (\(path))" }
        if let cause, !cause.isEmpty { text += ": \(cause)" }
        return text
    }
}
