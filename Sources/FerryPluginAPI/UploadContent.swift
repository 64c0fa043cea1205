/// The bytes an upload sends when they are not a local file as it stands: a file
/// encrypted as it is read. Random access, so a resent request (a redirect, a 401
/// challenge) and a ranged `PUT` read any range again, and the same range always gives
/// the same bytes.
public protocol UploadContent: Sendable {
    /// Copies up to `count` bytes from `offset` into the start of `buffer` (which holds at
    /// least `count`); returns how many, fewer only at the end.
    func read(into buffer: inout [UInt8], count: Int, at offset: Int64) throws(BackendError) -> Int

    /// Throws `changedDuringTransfer` when what the bytes are made from (the source file)
    /// is no longer the version the upload was planned for. A backend calls it where it
    /// would look at a plain source: after reading all the bytes, before the upload goes
    /// under its final name.
    func verifySource() throws(BackendError)
}

/// A backend that sends `UploadRequest.content` when it is set. A wrapper that makes
/// content (encryption) hands it only to such a backend, and writes a scratch file for
/// any other.
public protocol ContentUploadBackend: Backend {}
