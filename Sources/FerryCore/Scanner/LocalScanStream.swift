import FerryPluginAPI

/// The local side of a run as planning reads it: files in path order, a batch at a time,
/// without the files still being written (held back, and remembered for the summary);
/// what the walk passed over goes to `onNote` as it is found, and names that clash by
/// Unicode normalization are kept apart for planning to leave alone.
public actor LocalScanStream {
    /// One chunk of the walk read on a blocking thread, with the walk that reads on after it.
    private typealias ChunkRead = Task<Result<(batch: LocalTreeWalk.Batch, walk: LocalTreeWalk), BackendError>, Never>

    private enum Source {
        case walk(LocalTreeWalk)
        /// The walk is reading its next chunk on a blocking thread.
        case reading(ChunkRead)
        case entries([LocalEntry], next: Int)
    }

    private var source: Source?
    /// Settled files read and not yet handed out.
    private var surplus: ArraySlice<LocalEntry> = []
    private let holdBack: Set<String>
    private let settleCutoff: SettleCutoff?
    private let onNote: @Sendable (ScanNote) -> Void
    private let onFresh: @Sendable ([String: Double]) -> Void
    /// Paths left out because they are still being written.
    public private(set) var heldBack: [String] = []
    /// Sibling names found to clash, so far: complete for every folder the walk entered,
    /// which includes every folder before the last file handed out.
    public private(set) var clashes: [LocalTreeWalk.Clash] = []

    /// `onFresh` hears of the files left out by `settleCutoff` (not those in `holdBack`,
    /// which the watcher follows), a batch at a time, with their modification times.
    public init(walk: LocalTreeWalk?, holdBack: Set<String> = [], settleCutoff: SettleCutoff? = nil,
                onFresh: @escaping @Sendable ([String: Double]) -> Void = { _ in },
                onNote: @escaping @Sendable (ScanNote) -> Void = { _ in }) {
        self.source = walk.map(Source.walk)
        self.holdBack = holdBack
        self.settleCutoff = settleCutoff
        self.onNote = onNote
        self.onFresh = onFresh
    }

    /// A scan already in hand (tests, and callers that looked at a part of a folder).
    public init(scan: ScanResult) {
        let sorted = scan.entries.sorted { $0.path.string.precedesInUTF8Order($1.path.string) }
        self.source = .entries(sorted, next: 0)
        self.holdBack = []
        self.settleCutoff = nil
        self.onNote = { _ in }
        self.onFresh = { _ in }
    }

    /// Files the walk reads per trip to its blocking thread. A trip hops between threads
    /// four times; at 1,000 files a trip, on two busy cores, those hops left the walk's
    /// thread idle for a third of a no-op push.
    static let walkChunk = 4_096

    /// Up to `limit` files in path order; fewer only at the end, none once it is over.
    /// The walk reads on while the files handed out are planned: its next chunk is
    /// started before this returns.
    public func next(limit: Int) async throws(BackendError) -> [LocalEntry] {
        var taken: [LocalEntry] = []
        while true {
            let used = min(surplus.count, limit - taken.count)
            taken += surplus.prefix(used)
            surplus = surplus.dropFirst(used)
            guard taken.count < limit, let source else { break }
            switch source {
            case let .walk(walk):
                self.source = .reading(Self.read(walk))
            case let .reading(reading):
                let (batch, walk) = try await reading.value.get()
                self.source = walk.isFinished ? nil : .reading(Self.read(walk))
                batch.notes.forEach(onNote)
                clashes += batch.clashes
                var fresh: [String: Double] = [:]
                surplus = batch.entries.filter { isSettled($0, fresh: &fresh) }[...]
                if !fresh.isEmpty { onFresh(fresh) }
            case let .entries(entries, next):
                let end = min(entries.count, next + limit - taken.count)
                taken += entries[next..<end]
                self.source = end == entries.count ? nil : .entries(entries, next: end)
            }
        }
        return taken
    }

    private static func read(_ current: LocalTreeWalk) -> ChunkRead {
        Task {
            do throws(BackendError) {
                return .success(try await BlockingIO.run { () throws(BackendError) in
                    var walk = current
                    let batch = try walk.next(limit: walkChunk)
                    return (batch, walk)
                })
            } catch {
                return .failure(error)
            }
        }
    }

    private func isSettled(_ entry: LocalEntry, fresh: inout [String: Double]) -> Bool {
        guard !holdBack.isEmpty || settleCutoff != nil else { return true }
        let path = entry.path.string
        if holdBack.contains(path) {
            heldBack.append(path)
            return false
        }
        if let settleCutoff, settleCutoff.isFresh(modifiedNanos: entry.version.modifiedNanos) {
            heldBack.append(path)
            fresh[path] = Double(entry.version.modifiedNanos) / 1e9
            return false
        }
        return true
    }
}
