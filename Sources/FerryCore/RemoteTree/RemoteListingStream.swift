import FerryPlanning
import FerryPluginAPI

/// The remote side of a run as planning reads it: files by path below the pair's remote
/// root, in path order, a batch at a time; either walked folder by folder as planning
/// goes (`RemoteTreeWalk`) or taken from a listing already in hand. Ignored names are
/// left out; names that clash by Unicode normalization are kept apart for planning to
/// leave alone.
actor RemoteListingStream {
    private enum Source {
        case walk(RemoteTreeWalk, any Backend)
        case entries([(key: String, value: RemoteEntry)], next: Int)
    }

    private var source: Source?
    private let top: RelativePath
    private let ignore: GlobSet?
    /// Sibling names found to clash so far: complete for every folder the walk entered.
    private(set) var clashes: [RemoteTreeWalk.Clash] = []
    /// Files handed out so far.
    private(set) var fileCount = 0

    init(walk: RemoteTreeWalk, backend: any Backend, ignore: GlobSet) {
        source = .walk(walk, backend)
        top = walk.top
        self.ignore = ignore
    }

    /// A listing in hand, by relative path (already filtered).
    init(files: [String: RemoteEntry]) {
        source = .entries(files.sorted { $0.key.precedesInUTF8Order($1.key) }, next: 0)
        top = .root
        ignore = nil
    }

    /// Up to `limit` files in path order, by relative path; fewer only at the end.
    func next(limit: Int) async throws(BackendError) -> [(key: String, value: RemoteEntry)] {
        var taken: [(key: String, value: RemoteEntry)] = []
        while taken.count < limit, let source {
            switch source {
            case let .walk(current, backend):
                var walk = current
                let batch = try await walk.next(limit: limit - taken.count, from: backend)
                self.source = walk.isFinished ? nil : .walk(walk, backend)
                clashes += batch.clashes
                for entry in batch.files {
                    guard let relative = entry.path.relative(to: top)?.string, !relative.isEmpty,
                          !(ignore?.matches(relative) ?? false) else { continue }
                    taken.append((relative, entry))
                }
            case let .entries(entries, next):
                let end = min(entries.count, next + limit - taken.count)
                taken += entries[next..<end]
                self.source = end == entries.count ? nil : .entries(entries, next: end)
            }
        }
        fileCount += taken.count
        return taken
    }
}
