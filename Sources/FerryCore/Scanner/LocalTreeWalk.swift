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
    public struct Clash: Sendable {
        public var paths: [String]
        /// Whether one of them is a folder: everything below it is left alone too.
        public var hasFolder: Bool
        /// The clashing regular files, for a caller that wants every file (`LocalScanner.scan`).
        public var files: [LocalEntry]
    }

    private enum Found: Sendable {
        case file(LocalVersion)
        case folder(identity: [UInt64])
    }

    private struct Child: Sendable {
        var path: RemotePath
        var text: String
        var found: Found
        /// The name's sort key: a folder's name ends in `/`.
        var key: String
    }

    private struct Frame: Sendable {
        var ancestors: [[UInt64]]
        var children: [Child]
        var next = 0
    }

    public let root: String
    public let ignore: GlobSet
    public let followSymlinks: Bool
    private let realRoot: String
    private var stack: [Frame] = []
    /// The root, before the first batch lists it.
    private var pendingRoot: [UInt64]?

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
        self.pendingRoot = [rootInfo.device, rootInfo.inode]
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
            switch child.found {
            case let .file(version):
                batch.entries.append(LocalEntry(path: child.path, version: version))
            case let .folder(identity):
                let ancestors = stack[top].ancestors + [identity]
                if let frame = try enter(child.path, ancestors: ancestors, batch: &batch) { stack.append(frame) }
            }
        }
        return batch
    }

    /// Lists and sorts one folder's children; nil when it cannot be read (noted), and
    /// throws only for the root.
    private func enter(_ folder: RemotePath, ancestors: [[UInt64]], batch: inout Batch) throws(BackendError) -> Frame? {
        let absoluteFolder = LocalFileSystem.join(root, folder.string)
        let listing: LocalFileSystem.DirectoryListing
        do {
            listing = try LocalFileSystem.directoryListing(absoluteFolder)
        } catch {
            if folder.isRoot { throw BackendError(error) }
            batch.notes.append(ScanNote(path: folder.string, reason: .unreadable, detail: error.reason))
            return nil
        }
        for raw in listing.undecodableNames {
            batch.notes.append(ScanNote(path: LocalFileSystem.join(folder.string, raw), reason: .unsupportedName))
        }
        var children: [Child] = []
        children.reserveCapacity(listing.names.count)
        for name in listing.names {
            guard let path = try? folder.appending(name) else {
                batch.notes.append(ScanNote(path: LocalFileSystem.join(folder.string, name), reason: .unsupportedName))
                continue
            }
            let text = path.string
            if ignore.matches(text) { continue }
            let absolute = LocalFileSystem.join(root, text)
            guard var info = try? LocalFileSystem.metadata(absolute) else {
                batch.notes.append(ScanNote(path: text, reason: .unreadable))
                continue
            }
            if info.kind == .symbolicLink {
                guard followSymlinks else {
                    batch.notes.append(ScanNote(path: text, reason: .symbolicLink))
                    continue
                }
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
                let identity = [info.device, info.inode]
                // A followed link back to a folder above is a loop; a link to a sibling
                // folder is walked (its files appear under both names, as `cp -rL` copies).
                if !ancestors.contains(identity) {
                    children.append(Child(path: path, text: text, found: .folder(identity: identity), key: name + "/"))
                }
            case .file:
                children.append(Child(path: path, text: text, found: .file(LocalVersion(
                    size: info.size, modifiedNanos: info.modifiedNanos, inode: Int64(bitPattern: info.inode))), key: name))
            case .symbolicLink, .other:
                batch.notes.append(ScanNote(path: text, reason: .specialFile))
            }
        }
        children = withoutClashes(children, batch: &batch)
        children.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        return Frame(ancestors: ancestors, children: children)
    }

    /// The children without the names that clash by Unicode normalization, which go into
    /// the batch's clashes. Only siblings can clash: paths that differ above their last
    /// component differ in some folder's name, and those folders were siblings.
    private func withoutClashes(_ children: [Child], batch: inout Batch) -> [Child] {
        // Strings compare canonically: a plain-ASCII folder (the usual case) has no
        // group larger than one and costs one set insertion per name.
        let groups = NormalizationClash.groups(in: children.lazy.map(\.text))
        guard !groups.isEmpty else { return children }
        var clashing: Set<String> = []
        for group in groups {
            let members = children.filter { child in group.contains { $0.utf8.elementsEqual(child.text.utf8) } }
            var clash = Clash(paths: group, hasFolder: false, files: [])
            for member in members {
                switch member.found {
                case let .file(version): clash.files.append(LocalEntry(path: member.path, version: version))
                case .folder: clash.hasFolder = true
                }
            }
            batch.clashes.append(clash)
            clashing.formUnion(group)
        }
        return children.filter { !clashing.contains($0.text) }
    }
}
