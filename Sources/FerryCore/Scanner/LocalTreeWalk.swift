import FerryPlanning
import FerryPluginAPI
import FerrySystem

/// A walk of a local folder that hands out its regular files a batch at a time, in the
/// journal's order (the bytes of the `/`-joined paths), holding only the folders on the
/// current path: a tree of a million files is never in memory at once.
///
/// Path order falls out of a depth-first walk when each folder's children are sorted with
/// a folder's name followed by `/`: `a.txt` (`.` is 0x2E) comes before `a/x` (`/` is
/// 0x2F), and `a/x` before `a0`.
///
/// Ignored names are skipped without descending; symbolic links are skipped (with a note)
/// unless following is on, and never followed out of the folder; a folder that cannot be
/// read is noted and the walk goes on. Names in one folder that are equal by Unicode
/// normalization are not handed out (`NormalizationClash`): they are reported as clashes,
/// and a clashing folder is not entered.
public struct LocalTreeWalk: Sendable {
    /// One step's findings.
    public struct Batch: Sendable {
        public var entries: [LocalEntry] = []
        public var notes: [ScanNote] = []
        public var clashes: [Clash] = []
    }

    /// Sibling names equal by Unicode normalization.
    public struct Clash: Sendable, ClashingNames {
        public var paths: [String]
        /// Whether one of them is a folder: everything below it is left alone too.
        public var hasFolder: Bool
        /// The clashing regular files, for a caller that wants every file (`LocalScanner.scan`).
        public var files: [LocalEntry]
    }

    /// A folder as the kernel knows it, to notice a followed link that loops back.
    private struct FolderIdentity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    private enum Found: Sendable {
        case file(LocalVersion)
        case folder(FolderIdentity)
    }

    /// One entry of a folder, kept small: a folder's thousand children are sorted, and
    /// their paths are made only when they are handed out.
    private struct Child: Sendable {
        var name: String
        var found: Found

        var isFolder: Bool {
            if case .folder = found { return true }
            return false
        }

        /// Path order among siblings: the bytes of the name, a folder's followed by `/`.
        static func precedes(_ lhs: Child, _ rhs: Child) -> Bool {
            let left = lhs.name.utf8.span
            let right = rhs.name.utf8.span
            let common = Swift.min(left.count, right.count)
            var index = 0
            while index < common {
                if left[index] != right[index] { return left[index] < right[index] }
                index += 1
            }
            // One name starts the other: compare what follows, `/` for a folder, nothing
            // (below every byte) for a file. A name never holds a `/`.
            let slash = Int(UInt8(ascii: "/"))
            let nextLeft = left.count > common ? Int(left[common]) : (lhs.isFolder ? slash : -1)
            let nextRight = right.count > common ? Int(right[common]) : (rhs.isFolder ? slash : -1)
            return nextLeft < nextRight
        }

        /// The children in path order (`precedes`), sorted by their keys.
        static func sortedInPathOrder(_ children: [Child]) -> [Child] {
            var keys = children.indices.map { SiblingSortKey(name: children[$0].name, isFolder: children[$0].isFolder, index: $0) }
            keys.sort { lhs, rhs in
                SiblingSortKey.order(lhs, rhs) ?? precedes(children[lhs.index], children[rhs.index])
            }
            return keys.map { children[$0.index] }
        }
    }

    private struct Frame: Sendable {
        var folder: RelativePath
        var ancestors: [FolderIdentity]
        var children: [Child]
        var next = 0
    }

    public let root: String
    public let ignore: GlobSet
    public let followSymlinks: Bool
    private let realRoot: String
    private var stack: [Frame] = []
    /// The root, before the first batch lists it.
    private var pendingRoot: FolderIdentity?

    public var isFinished: Bool { pendingRoot == nil && stack.isEmpty }

    /// Checks the root: it must exist and be a folder.
    public init(root: String, ignore: GlobSet, followSymlinks: Bool) throws(BackendError) {
        guard let rootInfo = try BackendError.catching({ try LocalFileSystem.metadataFollowingLinks(root) }) else {
            throw BackendError(.notFound, "the local folder does not exist; create it or fix the folder's path", path: root)
        }
        guard rootInfo.kind == .directory else {
            throw BackendError(.notFound, "the local folder is not a folder", path: root)
        }
        self.root = root
        self.ignore = ignore
        self.followSymlinks = followSymlinks
        self.realRoot = LocalFileSystem.resolvedPath(root) ?? root
        self.pendingRoot = FolderIdentity(device: rootInfo.device, inode: rootInfo.inode)
    }

    /// Up to `limit` files (fewer only at the end), with what was passed over on the way.
    public mutating func next(limit: Int) throws(BackendError) -> Batch {
        var batch = Batch()
        if let identity = pendingRoot {
            pendingRoot = nil
            guard let frame = try enter(.root, ancestors: [identity], batch: &batch) else { return batch }
            stack.append(frame)
        }
        while batch.entries.count < limit, !stack.isEmpty {
            let top = stack.count - 1
            guard stack[top].next < stack[top].children.count else {
                stack.removeLast()
                continue
            }
            let child = stack[top].children[stack[top].next]
            stack[top].next += 1
            // The name was checked when its folder was listed (`enter`).
            let path = stack[top].folder.appending(checkedName: child.name)
            switch child.found {
            case let .file(version):
                batch.entries.append(LocalEntry(path: path, version: version))
            case let .folder(identity):
                let ancestors = stack[top].ancestors + [identity]
                if let frame = try enter(path, ancestors: ancestors, batch: &batch) { stack.append(frame) }
            }
        }
        return batch
    }

    /// Lists and sorts one folder's children; nil when it cannot be read (noted), and
    /// throws only for the root.
    private func enter(_ folder: RelativePath, ancestors: [FolderIdentity], batch: inout Batch) throws(BackendError) -> Frame? {
        let folderText = folder.string
        let absoluteFolder = LocalFileSystem.join(root, folderText)
        let listing: LocalFileSystem.MetadataListing
        do {
            listing = try LocalFileSystem.directoryListingWithMetadata(absoluteFolder)
        } catch {
            if folder.isRoot { throw BackendError(error) }
            batch.notes.append(ScanNote(path: folderText, reason: .unreadable, detail: error.reason))
            return nil
        }
        for raw in listing.undecodableNames {
            batch.notes.append(ScanNote(path: LocalFileSystem.join(folderText, raw), reason: .unsupportedName))
        }
        var children: [Child] = []
        children.reserveCapacity(listing.entries.count)
        for entry in listing.entries {
            let name = entry.name
            let text = folder.isRoot ? name : folderText + "/" + name
            guard (try? RelativePath.validate(name: name, in: text)) != nil else {
                batch.notes.append(ScanNote(path: text, reason: .unsupportedName))
                continue
            }
            if ignore.matches(text) { continue }
            guard var info = entry.metadata else {
                batch.notes.append(ScanNote(path: text, reason: .unreadable))
                continue
            }
            if info.kind == .symbolicLink {
                guard followSymlinks else {
                    batch.notes.append(ScanNote(path: text, reason: .symbolicLink))
                    continue
                }
                let absolute = LocalFileSystem.join(root, text)
                guard let target = LocalFileSystem.resolvedPath(absolute),
                      target == realRoot || target.hasPrefix(realRoot == "/" ? "/" : realRoot + "/"),
                      let targetInfo = try? LocalFileSystem.metadataFollowingLinks(absolute) else {
                    batch.notes.append(ScanNote(path: text, reason: .linkOutsideFolder))
                    continue
                }
                info = targetInfo
            }
            switch info.kind {
            case .directory:
                let identity = FolderIdentity(device: info.device, inode: info.inode)
                // A followed link back to a folder above is a loop; a link to a sibling
                // folder is walked (its files appear under both names, as `cp -rL` copies).
                if !ancestors.contains(identity) {
                    children.append(Child(name: name, found: .folder(identity)))
                }
            case .file:
                children.append(Child(name: name, found: .file(LocalVersion(
                    size: info.size, modifiedNanos: info.modifiedNanos, inode: Int64(bitPattern: info.inode)))))
            case .symbolicLink, .other:
                batch.notes.append(ScanNote(path: text, reason: .specialFile))
            }
        }
        children = withoutClashes(children, in: folder, batch: &batch)
        children = Child.sortedInPathOrder(children)
        return Frame(folder: folder, ancestors: ancestors, children: children)
    }

    /// The children without the names that clash by Unicode normalization, which go into
    /// the batch's clashes. Only siblings can clash: paths that differ above their last
    /// component differ in some folder's name, and those folders were siblings.
    private func withoutClashes(_ children: [Child], in folder: RelativePath, batch: inout Batch) -> [Child] {
        // Different ASCII names are never canonically equivalent: a plain-ASCII folder (the
        // usual case) costs one look at each name's bytes.
        guard children.contains(where: { child in child.name.utf8.contains { $0 >= 0x80 } }) else { return children }
        let groups = NormalizationClash.groups(in: children.lazy.map(\.name))
        guard !groups.isEmpty else { return children }
        var clashing: Set<String> = []
        for group in groups {
            let members = children.filter { child in group.contains { $0.utf8.elementsEqual(child.name.utf8) } }
            var clash = Clash(paths: [], hasFolder: false, files: [])
            for member in members {
                guard let path = try? folder.appending(member.name) else { continue }
                clash.paths.append(path.string)
                switch member.found {
                case let .file(version): clash.files.append(LocalEntry(path: path, version: version))
                case .folder: clash.hasFolder = true
                }
            }
            batch.clashes.append(clash)
            clashing.formUnion(group)
        }
        return children.filter { !clashing.contains($0.name) }
    }
}
