import FerryPluginAPI
import FerrySystem
import Synchronization

/// The `PartialFileLedger` of one download over several streams, as the backend keeps
/// it: created (and flushed, with its folder entry) before the first out-of-order write,
/// raised only forwards whatever order the streams finish in, removed at the end.
final class LedgerFile: Sendable {
    let path: String
    private let file: OpenFile
    /// The value last written: writes happen under this lock, so a stream that raises
    /// the ledger can never be overtaken by one writing an older value.
    private let written: Mutex<Int64>

    /// Creates the ledger beside `partialFile`, saying `validBytes` are good. Blocking.
    init(partialFile: String, validBytes: Int64) throws(BackendError) {
        let path = PartialFileLedger.path(forPartial: partialFile)
        let file = try BackendError.catching { try OpenFile(path, mode: .writeTruncate, permissions: 0o600) }
        try BackendError.catching {
            try file.write(PartialFileLedger.encode(validBytes: validBytes), count: PartialFileLedger.recordLength, at: 0)
            try file.sync()
        }
        // Without its folder entry on disk, a power cut could leave the partial file's
        // holes with no ledger to warn of them.
        LocalFileSystem.syncDirectory(LocalFileSystem.parentPath(path))
        self.path = path
        self.file = file
        written = Mutex(validBytes)
    }

    /// Records that the first `validBytes` bytes are written and flushed. Blocking.
    func raise(to validBytes: Int64) throws(BackendError) {
        try written.withLock { (current: inout Int64) throws(BackendError) in
            guard validBytes > current else { return }
            try BackendError.catching {
                try file.write(PartialFileLedger.encode(validBytes: validBytes), count: PartialFileLedger.recordLength, at: 0)
            }
            current = validBytes
        }
    }

    /// Removes the ledger: the partial file's size is true again. Blocking.
    func remove() throws(BackendError) {
        try BackendError.catching { try LocalFileSystem.removeFile(path) }
    }
}
