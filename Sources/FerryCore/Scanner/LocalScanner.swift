import FerryPluginAPI
import FerrySystem

/// Walks a local folder and reports its regular files with size, modification time and
/// inode. Ignored names are skipped without descending; symbolic links are skipped (with a
/// note) unless following is on, and never followed out of the folder; a folder that
/// cannot be read is noted and the walk goes on.
public struct LocalScanner: Sendable {
    public let root: String
    public let ignore: GlobSet
    public let followSymlinks: Bool

    public init(root: String, ignore: GlobSet, followSymlinks: Bool) {
        self.root = root
        self.ignore = ignore
        self.followSymlinks = followSymlinks
    }

    public func scan() async throws(BackendError) -> ScanResult {
        let root = self.root
        let ignore = self.ignore
        let followSymlinks = self.followSymlinks
        return try await BlockingIO.run { () throws(BackendError) -> ScanResult in
            try Self.walk(root: root, ignore: ignore, followSymlinks: followSymlinks)
        }
    }

    static func walk(root: String, ignore: GlobSet, followSymlinks: Bool) throws(BackendError) -> ScanResult {
        guard let rootInfo = try BackendError.catching({ try LocalFileSystem.metadataFollowingLinks(root) }) else {
            throw BackendError(.notFound, "the local folder does not exist; create it or fix the folder's path", path: root)
        }
        guard rootInfo.kind == .directory else {
            throw BackendError(.notFound, "the local folder is not a folder", path: root)
        }
        let realRoot = LocalFileSystem.resolvedPath(root) ?? root
        var entries: [LocalEntry] = []
        var notes: [ScanNote] = []
        // Each pending folder carries the (device, inode) of its ancestors: a followed link
        // back to one of them is a loop and is not entered; a link to a sibling folder is
        // walked (its files appear under both names, as `cp -rL` would copy them).
        var pending: [(RemotePath, [[UInt64]])] = [(.root, [[rootInfo.device, rootInfo.inode]])]
        while let (folder, ancestors) = pending.popLast() {
            let absoluteFolder = LocalFileSystem.join(root, folder.string)
            let listing: LocalFileSystem.DirectoryListing
            do {
                listing = try LocalFileSystem.directoryListing(absoluteFolder)
            } catch {
                if folder.isRoot { throw BackendError(error) }
                notes.append(ScanNote(path: folder.string, reason: .unreadable, detail: error.reason))
                continue
            }
            for raw in listing.undecodableNames {
                notes.append(ScanNote(path: LocalFileSystem.join(folder.string, raw), reason: .unsupportedName))
            }
            for name in listing.names.sorted() {
                guard let path = try? folder.appending(name) else {
                    notes.append(ScanNote(path: LocalFileSystem.join(folder.string, name), reason: .unsupportedName))
                    continue
                }
                if ignore.matches(path.string) { continue }
                let absolute = LocalFileSystem.join(root, path.string)
                guard var info = try? LocalFileSystem.metadata(absolute) else {
                    notes.append(ScanNote(path: path.string, reason: .unreadable))
                    continue
                }
                if info.kind == .symbolicLink {
                    guard followSymlinks else {
                        notes.append(ScanNote(path: path.string, reason: .symbolicLink))
                        continue
                    }
                    guard let target = LocalFileSystem.resolvedPath(absolute),
                          target == realRoot || target.hasPrefix(realRoot == "/" ? "/" : realRoot + "/"),
                          let targetInfo = try? LocalFileSystem.metadataFollowingLinks(absolute) else {
                        notes.append(ScanNote(path: path.string, reason: .linkOutsideFolder))
                        continue
                    }
                    info = targetInfo
                }
                switch info.kind {
                case .directory:
                    let identity = [info.device, info.inode]
                    if !ancestors.contains(identity) { pending.append((path, ancestors + [identity])) }
                case .file:
                    entries.append(LocalEntry(path: path, version: LocalVersion(
                        size: info.size, modifiedNanos: info.modifiedNanos, inode: Int64(bitPattern: info.inode))))
                case .symbolicLink, .other:
                    notes.append(ScanNote(path: path.string, reason: .specialFile))
                }
            }
        }
        return ScanResult(entries: entries, notes: notes)
    }
}
