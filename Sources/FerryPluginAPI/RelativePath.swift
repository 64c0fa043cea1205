/// A path below a folder's root, as validated components: a backend's root on the remote
/// side, the watched folder on the local side (a scan's entries, a plan's names). The same
/// name on both sides is what pairs a local file with its remote copy.
///
/// Every name that comes from outside (a remote listing, a config file, a command line)
/// becomes a `RelativePath` before it is used, so a hostile listing cannot name `..`, an
/// absolute path, or a component with a slash, NUL or control character in it.
public struct RelativePath: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let components: [String]
    /// The components joined by `/`, made once: a scan and its plan ask for it several
    /// times per file, and joining was a tenth of a no-op push's allocations.
    public let string: String

    /// The root of the backend.
    public static let root = RelativePath(validated: [])

    private init(validated components: [String]) {
        self.components = components
        self.string = components.joined(separator: "/")
    }

    private init(validated components: [String], string: String) {
        self.components = components
        self.string = string
    }

    /// Parses a slash-separated relative path. Empty components (`a//b`, a trailing slash)
    /// are dropped; `.`, `..`, NUL and control characters are refused.
    public init(_ string: String) throws(BackendError) {
        var parts: [String] = []
        var bytes = 0
        // Split by bytes, not `Character`s: every upload of a small file makes one.
        for part in string.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            let name = String(Substring(part))
            try RelativePath.validate(name: name, in: string)
            parts.append(name)
            bytes += part.count
        }
        // Nothing dropped (no empty component): the string is already the joined form.
        if !parts.isEmpty && bytes + parts.count - 1 == string.utf8.count {
            self.init(validated: parts, string: string)
        } else {
            self.init(validated: parts)
        }
    }

    /// Builds a path from components, validating each one.
    public init(components: [String]) throws(BackendError) {
        for name in components {
            try RelativePath.validate(name: name, in: components.joined(separator: "/"))
        }
        self.init(validated: components)
    }

    /// Checks one path component: not empty, not `.` or `..`, no `/`, NUL or control character.
    /// The context (the whole path, for the message) is only built for a refused name: every
    /// file of every scan passes through here.
    public static func validate(name: String, in context: @autoclosure () -> String) throws(BackendError) {
        if name.isEmpty || name == "." || name == ".." {
            throw BackendError(.invalidName, "refusing path component '\(name)'", path: context())
        }
        // Every refused character is ASCII, and no byte of a multi-byte UTF-8 sequence is.
        for byte in name.utf8 where byte == UInt8(ascii: "/") || byte < 0x20 || byte == 0x7F {
            throw BackendError(.invalidName, "refusing a name with a slash or control character", path: context())
        }
    }

    public var isRoot: Bool { components.isEmpty }
    public var name: String { components.last ?? "" }
    public var description: String { isRoot ? "/" : string }

    public var parent: RelativePath? {
        isRoot ? nil : RelativePath(validated: Array(components.dropLast()))
    }

    /// Appends one already-validated component.
    public func appending(_ name: String) throws(BackendError) -> RelativePath {
        try RelativePath.validate(name: name, in: string + "/" + name)
        return RelativePath(validated: components + [name], string: isRoot ? name : string + "/" + name)
    }

    /// Appends a name that `validate(name:in:)` already accepted: a tree walk checks each
    /// name when it lists the folder, and checking it again for every file was a
    /// twenty-fifth of a no-op push's CPU.
    package func appending(checkedName name: String) -> RelativePath {
        RelativePath(validated: components + [name], string: isRoot ? name : string + "/" + name)
    }

    /// Appends a relative path.
    public func appending(_ other: RelativePath) -> RelativePath {
        RelativePath(validated: components + other.components)
    }

    /// The path relative to `base`, or nil when this path is not inside it.
    public func relative(to base: RelativePath) -> RelativePath? {
        guard components.count >= base.components.count,
              Array(components.prefix(base.components.count)) == base.components else { return nil }
        return RelativePath(validated: Array(components.dropFirst(base.components.count)))
    }

    // Equal joined strings mean equal components: no component is empty or holds a `/`.
    public static func == (lhs: RelativePath, rhs: RelativePath) -> Bool { lhs.string == rhs.string }
    public func hash(into hasher: inout Hasher) { hasher.combine(string) }

    /// Component-wise order, so that a folder sorts directly before its contents.
    public static func < (lhs: RelativePath, rhs: RelativePath) -> Bool {
        lhs.components.lexicographicallyPrecedes(rhs.components) { $0.precedesInUTF8Order($1) }
    }
}
