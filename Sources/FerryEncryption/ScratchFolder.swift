import FerryPluginAPI
import FerrySystem
import Foundation

/// A private folder (mode 0700, in `$TMPDIR`) for the encrypted copies of files on their
/// way to or from the remote: the plaintext never goes there, and nobody else can read or
/// swap what does. Each file is removed as soon as its transfer ends; the folder with the
/// value.
final class ScratchFolder: Sendable {
    let path: String

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

    /// A new, empty file only this process writes; removed by `remove`.
    func newFile() throws(BackendError) -> (path: String, file: OpenFile) {
        let file = path + "/" + UUID().uuidString.lowercased()
        do {
            return (file, try OpenFile(file, mode: .writeTruncate, permissions: 0o600))
        } catch {
            throw BackendError(error)
        }
    }

    func remove(_ file: String) {
        try? LocalFileSystem.removeFile(file)
    }
}
