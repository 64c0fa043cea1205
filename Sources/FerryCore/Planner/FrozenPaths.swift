/// Paths that planning leaves alone on both sides, with their journal rows as they are:
/// names that clash by Unicode normalization (`NormalizationClash`), and everything below
/// folders whose names clash. A `Set<String>` compares canonically, so it holds every form
/// of each name.
struct FrozenPaths {
    private(set) var paths: Set<String>
    private var folders: Set<String> = []
    private var clashesSeen = 0

    init(paths: Set<String>) {
        self.paths = paths
    }

    /// Takes the clashes a local walk found so far (`clashes` only grows; the ones already
    /// taken are skipped).
    mutating func add(_ clashes: [LocalTreeWalk.Clash]) {
        for clash in clashes.dropFirst(clashesSeen) {
            paths.formUnion(clash.paths)
            if clash.hasFolder { folders.formUnion(clash.paths) }
        }
        clashesSeen = clashes.count
    }

    func contains(_ path: String) -> Bool {
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
