import Foundation

/// The AWS CLI's shared files, `~/.aws/credentials` and `~/.aws/config`: INI sections of
/// `key = value` lines. In `config` a profile's section is `[profile NAME]` (but
/// `[default]`); in `credentials` it is `[NAME]`. Comments start with `#` or `;`.
public struct AWSSharedConfigFile: Sendable, Equatable {
    /// Keys (lower-cased) and values by section name as written, without brackets.
    public var sections: [String: [String: String]]

    public init(sections: [String: [String: String]] = [:]) {
        self.sections = sections
    }

    public init(parsing text: String) {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                let name = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                current = name
                if sections[name] == nil { sections[name] = [:] }
                continue
            }
            guard let section = current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            // Nested settings (`s3 =` followed by indented lines) have no value of their own.
            if !value.isEmpty { sections[section, default: [:]][key] = value }
        }
        self.sections = sections
    }

    /// Reads a file; a missing or unreadable file is an empty one.
    public static func load(_ path: String) -> AWSSharedConfigFile {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return AWSSharedConfigFile() }
        return AWSSharedConfigFile(parsing: text)
    }

    /// A profile's settings in the credentials file (`[NAME]`).
    public func credentialsProfile(_ name: String) -> [String: String]? {
        sections[name]
    }

    /// A profile's settings in the config file (`[profile NAME]`, or `[default]`).
    public func configProfile(_ name: String) -> [String: String]? {
        sections["profile " + name] ?? (name == "default" ? sections["default"] : nil)
    }
}
