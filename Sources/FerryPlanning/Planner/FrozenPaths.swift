/// Paths that planning leaves alone on both sides, with their journal rows as they are:
/// names that clash by Unicode normalization (`NormalizationClash`), and everything below
/// folders whose names clash. A `Set<String>` compares canonically, so it holds every form
/// of each name.
package struct FrozenPaths {
    package private(set) var paths: Set<String>
    private var folders: Set<String> = []
    private var localClashesSeen = 0
    private var remoteClashesSeen = 0

    package init(paths: Set<String>) {
        self.paths = paths
    }

    /// Takes the clashes a local walk found so far (`clashes` only grows; the ones already
    /// taken are skipped).
    package mutating func add(local clashes: [some ClashingNames]) {
        for clash in clashes.dropFirst(localClashesSeen) { add(clash.paths, hasFolder: clash.hasFolder) }
        localClashesSeen = clashes.count
    }

    /// The same for a remote walk.
    package mutating func add(remote clashes: [some ClashingNames]) {
        for clash in clashes.dropFirst(remoteClashesSeen) { add(clash.paths, hasFolder: clash.hasFolder) }
        remoteClashesSeen = clashes.count
    }

    private mutating func add(_ group: [String], hasFolder: Bool) {
        paths.formUnion(group)
        if hasFolder { folders.formUnion(group) }
    }

    package func contains(_ path: String) -> Bool {
        if paths.contains(path) { return true }
        guard !folders.isEmpty else { return false }
        var end = path.endIndex
        while let slash = path[..<end].lastIndex(of: "/") {
            if folders.contains(String(path[..<slash])) { return true }
            end = slash
        }
        return false
    }
}

/// One group of names that clash by normalization, as a walk of one side reports it
/// (`LocalTreeWalk.Clash`, `RemoteTreeWalk.Clash`). Frozen paths need these two facts
/// only, not the walks, which read the disk and the remote (and stay in FerryCore).
package protocol ClashingNames {
    var paths: [String] { get }
    /// Whether one of them is a folder: everything below it is left alone too.
    var hasFolder: Bool { get }
}
