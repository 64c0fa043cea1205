import FerryPluginAPI
import FerrySystem
import Foundation
import Synchronization

/// A private folder (mode 0700, in `$TMPDIR`) for the encrypted copies of files on their
/// way to or from the remote: the plaintext never goes there, and nobody else can read or
/// swap what does. A small file whose transfer ended is kept for the next one (creating an
/// inode costs about a millisecond on a VM's disk, as much as sending a small file); a
/// large one is removed. The folder and all in it go with the value.
///
/// A file is never emptied by truncation to keep it: ext4 writes a file that was truncated
/// to zero out to disk when it is next closed (`auto_da_alloc`, its guard for programs that
/// rewrite a file in place), a disk write per encrypted upload for bytes nobody keeps.
final class ScratchFolder: Sendable {
    let path: String
    /// Files no transfer uses now, to be reused.
    private let idle = Mutex<[String]>([])
    /// Idle files up to this size are kept, with their bytes, until reused.
    static let keptSize: Int64 = 1 << 20

    init() throws(BackendError) {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let candidate = base + "/ferry-encryption-" + UUID().uuidString.lowercased()
        do {
            try FileManager.default.createDirectory(atPath: candidate, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw BackendError(.io, "cannot create a scratch folder for encryption in \(base): \(error.localizedDescription)",
                               retryable: false)
        }
        path = candidate
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// An empty file only this process writes, for one transfer at a time (another program
    /// writes it: the backend underneath); handed back by `remove`.
    func newFile() throws(BackendError) -> (path: String, file: OpenFile) {
        try open(.writeTruncate)
    }

    /// The same, possibly holding an earlier transfer's bytes: for a writer that writes it
    /// from the start and then cuts it to the length it wrote (never zero), which leaves
    /// ext4 nothing to flush.
    func fileToOverwrite() throws(BackendError) -> (path: String, file: OpenFile) {
        try open(.writeKeep)
    }

    private func open(_ mode: OpenFile.Mode) throws(BackendError) -> (path: String, file: OpenFile) {
        let file = idle.withLock { $0.popLast() } ?? path + "/" + UUID().uuidString.lowercased()
        do {
            return (file, try OpenFile(file, mode: mode, permissions: 0o600))
        } catch {
            throw BackendError(error)
        }
    }

    /// Keeps a small file for the next transfer; removes a large one, whose blocks (and dirty
    /// pages, not yet written out) go with it.
    func remove(_ file: String) {
        do {
            if let meta = try LocalFileSystem.metadata(file), meta.size <= Self.keptSize {
                idle.withLock { $0.append(file) }
                return
            }
        } catch {}
        try? LocalFileSystem.removeFile(file)
    }
}
