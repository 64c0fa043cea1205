import FerryConfig
import FerryJournal
import FerryPlanning
import FerrySystem

/// What a person asks of the recorded folders, whether through a command or the control
/// API: failed files made runnable again, conflicts answered, a folder's totals and media
/// items. `ferry retry photos` and `POST /v1/folders/photos/retry` do the same thing to the
/// journal because both call this; they differ only in how they ask and how they answer.
/// Pairs are picked by `RecordedFolders`; times come from the caller's clock.
public struct FolderService: Sendable {
    public let recorded: RecordedFolders
    private let clock: any FerryClock

    /// The paths a request changed in one pair.
    public struct PairPaths: Sendable {
        public let pair: FolderPairRecord
        public let paths: [String]
    }

    public init(recorded: RecordedFolders, clock: any FerryClock) {
        self.recorded = recorded
        self.clock = clock
    }

    /// Nil when nothing has run yet (there is no journal); nothing is created.
    public static func read(_ state: StateFolder, clock: any FerryClock) async throws(JournalError) -> FolderService? {
        try await RecordedFolders.read(state).map { FolderService(recorded: $0, clock: clock) }
    }

    public var journal: Journal { recorded.journal }

    // MARK: Failed files

    /// The failed files of `pair` (all, or those at or below `paths`) become pending with a
    /// fresh count of attempts; the paths reset.
    public func retry(in pair: FolderPairRecord, paths: [String]?) async throws(JournalError) -> [String] {
        guard let id = pair.id else { return [] }
        return try await journal.retryFailed(pairId: id, paths: paths, at: clock.wallTime())
    }

    /// `retry(in:paths:)` for each target (a pair, and a path inside it or nil for all).
    public func retry(_ targets: [(pair: FolderPairRecord, inside: String?)]) async throws(JournalError) -> [PairPaths] {
        var reset: [PairPaths] = []
        for target in targets {
            let paths = try await retry(in: target.pair, paths: target.inside.map { [$0] })
            reset.append(PairPaths(pair: target.pair, paths: paths))
        }
        return reset
    }

    /// Every failed file of every recorded pair.
    public func retryAll() async throws(JournalError) -> [PairPaths] {
        try await retry(recorded.pairs.map { ($0, nil) })
    }

    // MARK: Conflicts

    /// Records `keep` as the answer to the conflicts of `pair` at `path` (a file, or every
    /// one below a folder; "" for all); the paths answered. The next run carries it out.
    public func resolve(in pair: FolderPairRecord, path: String, keep: ConflictPolicy) async throws(JournalError) -> [String] {
        guard let id = pair.id else { return [] }
        return try await journal.resolveConflicts(pairId: id, path: path, keep: keep, at: clock.wallTime())
    }

    /// Answers the conflicts `text` names in whichever pairs have one there: first as a path
    /// from `currentDirectory` inside a pair's folder; then, if relative, as the conflict
    /// lines print it, a path from a folder's root. Each pair is answered once.
    public func resolve(_ text: String, currentDirectory: String, keep: ConflictPolicy) async throws(JournalError) -> [PairPaths] {
        let absolute = LocalFileSystem.absolute(text, relativeTo: currentDirectory)
        var candidates: [(FolderPairRecord, String)] = recorded.pairs.compactMap { pair in
            RecordedFolders.path(absolute, inside: pair).map { (pair, $0) }
        }
        if !text.hasPrefix("/") {
            let inFolder = text.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
            candidates += recorded.pairs.map { ($0, inFolder) }
        }
        var resolved: [PairPaths] = []
        for (pair, relative) in candidates where !resolved.contains(where: { $0.pair.id == pair.id }) {
            let paths = try await resolve(in: pair, path: relative, keep: keep)
            if !paths.isEmpty { resolved.append(PairPaths(pair: pair, paths: paths)) }
        }
        return resolved
    }

    // MARK: Forgetting

    /// Drops from the journal the pairs `text` names, with their rows; the pairs dropped.
    /// A configured folder's name means every pair recorded under that name (one from
    /// before its path changed too); a path means the ad-hoc pairs of that folder, since a
    /// configured folder at the same path is forgotten only by its name.
    public func forget(_ text: String, config: Config, currentDirectory: String) async throws(JournalError) -> [FolderPairRecord] {
        var pairs = config.folder(named: text) == nil ? [] : recorded.pairs.filter { $0.name == text }
        if pairs.isEmpty {
            let absolute = LocalFileSystem.absolute(text, relativeTo: currentDirectory)
            pairs = recorded.pairs.filter { pair in
                pair.localRoot == absolute && config.folder(named: pair.name)?.localPath != pair.localRoot
            }
        }
        for pair in pairs {
            guard let id = pair.id else { continue }
            try await journal.forgetFolderPair(id: id)
        }
        return pairs
    }

    // MARK: Reading

    /// Files and bytes per status of `pair` (empty when it never ran).
    public func totals(of pair: FolderPairRecord) async throws(JournalError) -> StatusTotals {
        guard let id = pair.id else { return StatusTotals([]) }
        return try await journal.statusTotals(pairId: id)
    }

    /// The media items of `pair`: its files grouped as `grouping` says (`items:`), in key order.
    public func items(of pair: FolderPairRecord, by grouping: ItemGrouping) async throws(JournalError) -> [MediaItem] {
        guard let id = pair.id else { return [] }
        return Self.items(of: try await journal.records(pairId: id), by: grouping)
    }

    /// The media items `records` make, for a caller that needs the rows as well.
    public static func items(of records: [FileRecord], by grouping: ItemGrouping) -> [MediaItem] {
        MediaItem.group(records.map { record in
            MediaItem.FileState(path: record.path, status: record.status, bytes: record.localSize ?? record.remoteSize ?? 0)
        }, by: grouping)
    }
}
