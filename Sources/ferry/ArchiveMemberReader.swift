import ArchiveCodec
import FerryBundles
import FerryConfig
import FerryPluginAPI
import FerrySystem
import Foundation

/// Reads the members of archive files on a remote for `ferry ls --archive-contents`. Each
/// archive is fetched into a scratch folder made on first use, private to this user (never
/// a name another user could plant beforehand), and removed by `removeScratch`.
final class ArchiveMemberReader {
    private let backend: any Backend
    private var scratchFolder: String?

    init(backend: any Backend) {
        self.backend = backend
    }

    /// Whether `ls` looks inside this entry.
    static func isArchive(_ entry: RemoteEntry, named name: String) -> Bool {
        entry.kind == .file && ArchiveContents.isArchiveName(name)
    }

    func members(of entry: RemoteEntry) async throws(CommandFailure) -> Result<[ArchiveEntry], BundleError> {
        let folder = try scratch()
        do {
            return .success(try await ArchiveContents.members(of: entry, backend: backend, scratchDirectory: folder))
        } catch {
            return .failure(error)
        }
    }

    func removeScratch() {
        if let scratchFolder { try? FileManager.default.removeItem(atPath: scratchFolder) }
        scratchFolder = nil
    }

    private func scratch() throws(CommandFailure) -> String {
        if let scratchFolder { return scratchFolder }
        do {
            let made = try LocalFileSystem.makePrivateTemporaryDirectory(in: FileManager.default.temporaryDirectory.path,
                                                                          prefix: "ferry-ls-")
            scratchFolder = made
            return made
        } catch {
            throw CommandFailure.runtime("cannot make a private folder to read archives in: \(error.description)")
        }
    }
}
