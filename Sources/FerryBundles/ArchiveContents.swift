import ArchiveCodec
import FerryConfig
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

/// What is inside files that are archives already: `ferry ls --archive-contents` lists
/// members through libarchive. The globs that name such files (`fileGlobs`) are
/// FerryConfig's, where the standard queue rules use them.
extension ArchiveContents {
    private static let names = try? GlobSet(fileGlobs)

    public static func isArchiveName(_ path: String) -> Bool {
        names?.matches(path) ?? false
    }

    /// The members of a remote archive file: it is downloaded into `scratchDirectory`
    /// (removed afterwards) and read with libarchive. A damaged or unreadable archive
    /// throws with libarchive's cause.
    public static func members(of entry: RemoteEntry, backend: any Backend,
                               scratchDirectory: String) async throws(BundleError) -> [ArchiveEntry] {
        let copy = LocalFileSystem.join(scratchDirectory, TemporaryName.for(entry.path.name))
        defer { try? LocalFileSystem.removeFile(copy) }
        do {
            try LocalFileSystem.makeDirectories(scratchDirectory, permissions: 0o700)
            _ = try OpenFile(copy, mode: .writeTruncate, permissions: 0o600)
            _ = try await backend.download(DownloadRequest(source: entry.path, partialFile: copy, offset: 0, expected: entry, flush: false),
                                           observer: NullTransferObserver())
        } catch {
            throw BundleError("cannot fetch \(entry.path): \(error)")
        }
        do {
            return try await BlockingIO.run { () throws(ArchiveError) -> [ArchiveEntry] in
                try ArchiveReader(path: copy, accepting: .anyBuiltIn).allEntries()
            }
        } catch {
            throw BundleError("\(entry.path) cannot be read as an archive: \(error.description)")
        }
    }

    /// Why a member would be refused on extraction (a link, an absolute name, `..`,
    /// control characters), or nil when it is a plain relative path.
    public static func refusalReason(for member: ArchiveEntry) -> String? {
        switch member.kind {
        case .symbolicLink, .hardLink: return "a link: never extracted"
        case .other: return "not a regular file: never extracted"
        case .file, .directory:
            // `tar -C dir .` names members `./x`: harmless, and how tar itself extracts them.
            var name = Substring(member.name)
            while name.hasPrefix("./") { name = name.dropFirst(2) }
            if name.hasSuffix("/") { name = name.dropLast() }
            return name.isEmpty || name == "." ? nil : BundleCatalog.refusalReason(String(name))
        }
    }
}
