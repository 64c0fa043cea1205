import FerryPluginAPI
import FerrySystem
import Foundation
import Synchronization

/// A private folder (mode 0700, in `$TMPDIR`) for the encrypted copies of files on their
/// way to or from the remote: the plaintext never goes there, and nobody else can read or
/// swap what does. A file whose transfer ended is kept for the next one (emptied first when
/// large; creating an inode costs about a millisecond on a VM's disk, as much as sending a small
/// file); the folder and all in it go with the value.
final class ScratchFolder: Sendable {
    let path: String
    /// Files no transfer uses now, to be reused.
    private let idle = Mutex<[String]>([])
    /// Idle files up to this size keep their bytes until reused.
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

    /// An empty file only this process writes, for one transfer at a time; handed back
    /// by `remove`.
    func newFile() throws(BackendError) -> (path: String, file: OpenFile) {
        let file = idle.withLock { $0.popLast() } ?? path + "/" + UUID().uuidString.lowercased()
        do {
            return (file, try OpenFile(file, mode: .writeTruncate, permissions: 0o600))
        } catch {
            throw BackendError(error)
        }
    }

    /// Keeps the file for the next transfer (which empties it when it opens it); a large
    /// one is emptied now, so its blocks do not wait for that.
    func remove(_ file: String) {
        do {
            if let meta = try LocalFileSystem.metadata(file), meta.size > Self.keptSize {
                try OpenFile(file, mode: .writeExisting).truncate(to: 0)
            }
            idle.withLock { $0.append(file) }
        } catch {
            try? LocalFileSystem.removeFile(file)
        }
    }
}
