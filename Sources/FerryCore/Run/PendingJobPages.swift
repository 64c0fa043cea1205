/// A run's jobs, read from the journal a page per queue at a time, so that a first push of
/// a million files holds a few thousand jobs in memory, not a million.
///
/// Planning has written every job before the run starts (status pending, `action` set);
/// it walks each queue in path order with its own cursor, so each job is read once
/// even while the engine rewrites rows behind the cursor (retries, results).
struct PendingJobPages: Sendable {
    /// Jobs read per page.
    static let pageSize = 2_000
    /// A queue is refilled when fewer than this many of its jobs wait in the scheduler.
    static let lowWater = 500

    private struct Cursor: Sendable {
        var queue: String
        var rank: Int
        var after: String?
        var exhausted = false
    }

    let journal: Journal
    let pairId: Int64
    private var cursors: [Cursor]
    private let pageSize: Int

    /// Queues with jobs, in priority order, with their totals for the progress display.
    let totals: [(queue: String, rank: Int, total: PendingJobTotal)]

    init(journal: Journal, pairId: Int64, classifier: QueueClassifier,
         pageSize: Int = PendingJobPages.pageSize) async throws(JournalError) {
        self.journal = journal
        self.pairId = pairId
        self.pageSize = max(1, pageSize)
        let ranked = try await journal.pendingJobTotals(pairId: pairId)
            .map { (queue: $0.queue, rank: classifier.rank(of: $0.queue), total: $0) }
            .sorted { $0.rank != $1.rank ? $0.rank < $1.rank : $0.queue < $1.queue }
        totals = ranked
        cursors = ranked.map { Cursor(queue: $0.queue, rank: $0.rank) }
    }

    var isExhausted: Bool { cursors.allSatisfy(\.exhausted) }

    /// The next page of every queue whose waiting jobs ran low (`waiting(rank)` is how
    /// many of a rank's jobs the scheduler holds).
    mutating func refill(waiting: (Int) -> Int) async throws(JournalError) -> [FileRecord] {
        var loaded: [FileRecord] = []
        for index in cursors.indices where !cursors[index].exhausted && waiting(cursors[index].rank) < Self.lowWater {
            let page = try await journal.pendingJobs(pairId: pairId, queue: cursors[index].queue,
                                                     after: cursors[index].after, limit: pageSize)
            cursors[index].after = page.last?.path ?? cursors[index].after
            cursors[index].exhausted = page.count < pageSize
            loaded += page
        }
        return loaded
    }
}
