public import FerryPluginAPI
#if canImport(Glibc)
import Glibc
#endif

extension BackendError {
    /// The backend error for a failed system call, classified for the retry policy: a disk
    /// that is full or read-only, a name the filesystem refuses and a denied permission are
    /// permanent; an interrupted or busy call is worth another attempt.
    public init(_ error: SystemError) {
        let message = error.operation
        let path = error.path
        let cause = error.reason
        switch error.code {
        case ENOENT, ENOTDIR: self.init(.notFound, message, path: path, cause: cause, underlying: error)
        case EEXIST, ENOTEMPTY: self.init(.alreadyExists, message, path: path, cause: cause, underlying: error)
        case EACCES, EPERM: self.init(.permissionDenied, message, path: path, cause: cause, underlying: error)
        case ENOSPC, EDQUOT:
            self.init(.noSpace, message + " (disk full: free some space)", path: path, cause: cause, underlying: error)
        case EROFS: self.init(.readOnly, message + " (read-only filesystem)", path: path, cause: cause, underlying: error)
        case ENAMETOOLONG, EILSEQ: self.init(.invalidName, message, path: path, cause: cause, underlying: error)
        case ELOOP:
            self.init(.permissionDenied, message + " (a symbolic link is in the way; Ferry never writes through one)",
                      path: path, cause: cause, underlying: error)
        case EINTR, EAGAIN, EBUSY, ETIMEDOUT, EIO:
            self.init(.io, message, path: path, cause: cause, retryable: true, underlying: error)
        default: self.init(.io, message, path: path, cause: cause, retryable: false, underlying: error)
        }
    }

    /// Runs system calls where a backend error is expected: a `SystemError` becomes the
    /// classified `BackendError`; a `BackendError` the body throws itself passes through.
    public static func catching<T>(_ body: () throws -> T) throws(BackendError) -> T {
        do {
            return try body()
        } catch let error as BackendError {
            throw error
        } catch let error as SystemError {
            throw BackendError(error)
        } catch {
            throw BackendError(.io, "\(error)")
        }
    }
}
