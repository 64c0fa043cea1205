import FerryPlanning
import FerryPluginAPI

/// A walk of a remote folder that hands out its files a batch at a time in the journal's
/// order, listing one folder at a time as the walk reaches it, and holding only the
/// listings of the folders on the current path: a remote of a million files is never in
/// memory at once. The order is `LocalTreeWalk`'s: a folder sorts as its name and `/`.
///
/// As `Backend.listTree`: a missing top folder is an empty tree; `hints` are folders a
/// server leaves out of its listings (nginx hides names starting with `.`), listed
/// directly when their parent is reached, and skipped when they do not exist; `bounds`
/// stops a tree without end; `waitToRetry` decides, per failed folder listing, whether and
/// when to list it again. Folders in `skipped` are not entered (the remote trash and
/// Ferry's own folders). Sibling names equal by Unicode normalization are not handed out
/// but reported (a clashing folder is not entered).
struct RemoteTreeWalk: Sendable {
    /// One step's findings.
    struct Batch: Sendable {
        var files: [RemoteEntry] = []
        var clashes: [Clash] = []
    }

    /// Sibling names equal by Unicode normalization, as paths below the walk's top.
    struct Clash: Sendable, ClashingNames {
        var paths: [String]
        var hasFolder: Bool
    }

    private struct Frame: Sendable {
        var children: [RemoteEntry]
        var next = 0
    }

    let top: RelativePath
    let hints: Set<RelativePath>
    let skipped: Set<RelativePath>
    let bounds: ListingBounds
    let waitToRetry: @Sendable (BackendError, Int) async -> Bool
    private var stack: [Frame] = []
    private var started = false
    private var entriesSeen = 0

    init(top: RelativePath, hints: Set<RelativePath>, skipped: Set<RelativePath>, bounds: ListingBounds,
         waitToRetry: @escaping @Sendable (BackendError, Int) async -> Bool) {
        self.top = top
        self.hints = hints
        self.skipped = skipped
        self.bounds = bounds
        self.waitToRetry = waitToRetry
    }

    var isFinished: Bool { started && stack.isEmpty }

    /// Up to `limit` files (fewer only at the end).
    mutating func next(limit: Int, from backend: any Backend) async throws(BackendError) -> Batch {
        var batch = Batch()
        if !started {
            started = true
            let children: [RemoteEntry]
            do {
                children = try await list(top, from: backend)
            } catch where error.code == .notFound {
                return batch
            }
            stack.append(try frame(of: top, children: children, batch: &batch))
        }
        while batch.files.count < limit, !stack.isEmpty {
            let index = stack.count - 1
            guard stack[index].next < stack[index].children.count else {
                stack.removeLast()
                continue
            }
            let child = stack[index].children[stack[index].next]
            stack[index].next += 1
            switch child.kind {
            case .file:
                batch.files.append(child)
            case .directory:
                let children: [RemoteEntry]
                do {
                    children = try await list(child.path, from: backend)
                } catch where error.code == .notFound && hints.contains(child.path) {
                    continue
                }
                stack.append(try frame(of: child.path, children: children, batch: &batch))
            }
        }
        return batch
    }

    /// A folder's children as the walk visits them: hinted folders added, skipped folders
    /// and clashing names taken out, in path order; bounds checked.
    private mutating func frame(of folder: RelativePath, children listed: [RemoteEntry],
                                batch: inout Batch) throws(BackendError) -> Frame {
        var children = listed.filter { $0.kind == .file || !skipped.contains($0.path) }
        let listedFolders = Set(children.lazy.filter { $0.kind == .directory }.map(\.path))
        for hint in hints where hint.parent == folder && !listedFolders.contains(hint) && !skipped.contains(hint) {
            children.append(RemoteEntry(path: hint, kind: .directory, size: 0, modifiedNanos: nil))
        }
        for child in children {
            entriesSeen += 1
            if entriesSeen > bounds.maxEntries { throw bounds.tooMany(below: top) }
            if child.kind == .directory, child.path.components.count - top.components.count > bounds.maxDepth {
                throw bounds.tooDeep(child.path, below: top)
            }
        }
        let groups = NormalizationClash.groups(in: children.lazy.map(\.path.name))
        if !groups.isEmpty {
            var clashing: Set<String> = []
            for group in groups {
                let members = children.filter { child in group.contains { $0.utf8.elementsEqual(child.path.name.utf8) } }
                batch.clashes.append(Clash(paths: members.compactMap { $0.path.relative(to: top)?.string },
                                           hasFolder: members.contains { $0.kind == .directory }))
                clashing.formUnion(group)
            }
            children.removeAll { clashing.contains($0.path.name) }
        }
        func key(_ entry: RemoteEntry) -> String { entry.kind == .directory ? entry.path.name + "/" : entry.path.name }
        children.sort { key($0).precedesInUTF8Order(key($1)) }
        return Frame(children: children)
    }

    private func list(_ folder: RelativePath, from backend: any Backend) async throws(BackendError) -> [RemoteEntry] {
        try await backend.list(folder, waitToRetry: waitToRetry)
    }
}
