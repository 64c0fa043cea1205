import Glibc

/// Files and folders only their owner may read: API keys, the control socket's staging
/// folder. Made with the mode from the start (never created readable and narrowed after).
public enum PrivateFile {
    /// Writes `bytes` to a new 0600 file at `path` and flushes it. An existing file is never
    /// touched: EEXIST is thrown (`SystemError.code == EEXIST`); a failed write removes the
    /// new file.
    public static func create(_ path: String, bytes: [UInt8]) throws(SystemError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SystemError(errno, "cannot create", path: path) }
        defer { close(descriptor) }
        guard write(descriptor, bytes, bytes.count) == bytes.count, fsync(descriptor) == 0 else {
            let error = SystemError(errno, "cannot write", path: path)
            unlink(path)
            throw error
        }
    }

    /// Removes a file; false when there was none.
    public static func remove(_ path: String) throws(SystemError) -> Bool {
        guard unlink(path) == 0 else {
            if errno == ENOENT { return false }
            throw SystemError(errno, "cannot remove", path: path)
        }
        return true
    }

    /// Makes a 0700 folder that must not exist yet.
    public static func makeFolder(_ path: String) throws(SystemError) {
        guard mkdir(path, 0o700) == 0 else { throw SystemError(errno, "cannot create the folder", path: path) }
    }

    /// Narrows a file's mode to owner read and write.
    public static func restrict(_ path: String) throws(SystemError) {
        guard chmod(path, 0o600) == 0 else { throw SystemError(errno, "cannot chmod 600", path: path) }
    }
}
