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

    /// The name is taken (a create or a rename that must not replace).
    public var isAlreadyExists: Bool { code == EEXIST }

    /// The filesystem cannot do what a flag asked (`renameat2`'s RENAME_NOREPLACE on some
    /// network and FUSE filesystems): the caller takes the long way.
    public var isUnsupportedByFilesystem: Bool { code == EINVAL || code == EOPNOTSUPP || code == ENOSYS }

    /// A folder stood where a file was to go (a rename onto it, or a link over it).
    public var isFolderInTheWay: Bool { code == EISDIR || code == ENOTEMPTY || code == EEXIST }

    /// A program that cannot run at all (missing, not allowed, not an executable): trying
    /// again changes nothing.
    public var isNotExecutable: Bool { code == ENOENT || code == EACCES || code == ENOEXEC }

    /// A refusal to write over `path`, which exists, with `EEXIST`'s code.
    public static func alreadyExists(_ operation: String, path: String) -> SystemError {
        SystemError(EEXIST, operation, path: path)
    }

    public var description: String { "\(operation) (\(path)): \(reason)" }
}
