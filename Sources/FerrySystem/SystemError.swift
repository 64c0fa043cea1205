#if canImport(Glibc)
import Glibc
#endif

/// A system call that failed: which operation, on which path, and the `errno` it set.
/// Kept as the number (not only its text) so callers can tell "not there" from "not
/// allowed" from "disk full" without parsing messages.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `errno` value.
    public var code: Int32
    /// What was being done, for a person: "cannot create folder".
    public var operation: String
    /// The path (or resource, such as "inotify") it was done on.
    public var path: String

    public init(_ code: Int32, _ operation: String, path: String) {
        self.code = code
        self.operation = operation
        self.path = path
    }

    /// The C library's text for `code`.
    public var reason: String { String(cString: strerror(code)) }

    /// Nothing is there (or a parent is not a folder).
    public var isNotFound: Bool { code == ENOENT || code == ENOTDIR }

    /// A symbolic link stood where Ferry refuses to follow one (`AnchoredFolder`).
    public var isSymbolicLink: Bool { code == ELOOP }

    public var description: String { "\(operation) (\(path)): \(reason)" }
}
