import Glibc

/// An advisory lock (`flock`) on one file, held for the lifetime of the value. The kernel
/// drops it when the holder dies, even by SIGKILL, so a crash never leaves a stale lock.
///
/// Sendable: the descriptor is set once in `init` and only closed in `deinit`; `flock` and
/// `pwrite` on it need no lock of their own.
public final class FileLock: Sendable {
    private let descriptor: Int32
    public let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Opens `path` (created 0600 when missing) and locks it exclusively. Waits for another
    /// holder when `waits`; otherwise nil while someone else holds it.
    public static func exclusive(_ path: String, waits: Bool) throws(SystemError) -> FileLock? {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SystemError(errno, "cannot open the lock file", path: path) }
        let operation = waits ? LOCK_EX : LOCK_EX | LOCK_NB
        while flock(descriptor, operation) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(descriptor)
            if code == EWOULDBLOCK { return nil }
            throw SystemError(code, "cannot lock", path: path)
        }
        return FileLock(descriptor: descriptor, path: path)
    }

    /// Whether a process holds a lock on `path` now; false when the file does not exist
    /// (nobody ever locked it) or cannot be opened.
    public static func isHeld(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_SH | LOCK_NB) == 0 else { return true }
        flock(descriptor, LOCK_UN)
        return false
    }

    /// Replaces the lock file's content (a note naming the holder, for the message another
    /// process shows when it finds the lock taken).
    public func replaceContents(_ bytes: [UInt8]) throws(SystemError) {
        guard ftruncate(descriptor, 0) == 0 else { throw SystemError(errno, "cannot truncate", path: path) }
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == bytes.count else { throw SystemError(errno, "cannot write", path: path) }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
