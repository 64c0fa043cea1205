import FerryJournal
import FerryPlanning

/// A run's jobs, read from the journal a page per queue at a time, so that a first push of
/// a million files holds a few thousand jobs in memory, not a million.
///
/// Planning has written every job before the run starts (status pending, `action` set);
/// it walks each queue in path order with its own cursor, so each job is read once
/// even while the engine rewrites rows behind the cursor (retries, results).
package struct PendingJobPages: Sendable {
    /// Jobs read per page.
    package static let pageSize = 1_000
    /// A queue is refilled when fewer than this many of its jobs wait in the scheduler.
    package static let lowWater = 250

    private struct Cursor: Sendable {
        var queue: String
        var rank: Int
        var after: String?
        var exhausted = false
    }

    /// Where the jobs come from: the journal, or a list already in memory (a run whose
    /// jobs were sorted further after planning, e.g. into archive bundles).
    private enum Source: Sendable {
        case journal(Journal, pairId: Int64)
        case list([String: [FileRecord]])
    }

    private let source: Source
    private var cursors: [Cursor]
    private let pageSize: Int

    /// Queues with jobs, in priority order, with their totals for the progress display.
    package let totals: [(queue: String, rank: Int, total: PendingJobTotal)]

    /// `queues` restricts the run to jobs of these queues (a schedule for `archives`);
    /// the others stay queued in the journal.
    package init(journal: Journal, pairId: Int64, classifier: QueueClassifier, queues: Set<String>? = nil,
         pageSize: Int = PendingJobPages.pageSize) async throws(JournalError) {
        source = .journal(journal, pairId: pairId)
        self.pageSize = max(1, pageSize)
        let ranked = try await journal.pendingJobTotals(pairId: pairId)
            .filter { queues?.contains($0.queue) ?? true }
            .map { (queue: $0.queue, rank: classifier.rank(of: $0.queue), total: $0) }
            .sorted { $0.rank != $1.rank ? $0.rank < $1.rank : $0.queue < $1.queue }
        totals = ranked
        cursors = ranked.map { Cursor(queue: $0.queue, rank: $0.rank) }
    }

    /// The jobs of a list, handed out whole on the first refill.
    package init(jobs: [FileRecord], classifier: QueueClassifier) {
        let byQueue = Dictionary(grouping: jobs, by: \.queue)
        let ranked = byQueue.map { queue, jobs in
            (queue: queue, rank: classifier.rank(of: queue),
             total: PendingJobTotal(queue: queue, files: jobs.count, bytes: jobs.reduce(0) { $0 + $1.transferBytes }))
        }.sorted { $0.rank != $1.rank ? $0.rank < $1.rank : $0.queue < $1.queue }
        source = .list(byQueue)
        pageSize = .max
        totals = ranked
        cursors = ranked.map { Cursor(queue: $0.queue, rank: $0.rank) }
    }

    package var isExhausted: Bool { cursors.allSatisfy(\.exhausted) }

    /// The next page of every queue whose waiting jobs ran low (`waiting(rank)` is how
    /// many of a rank's jobs the scheduler holds).
    package mutating func refill(waiting: (Int) -> Int) async throws(JournalError) -> [FileRecord] {
        var loaded: [FileRecord] = []
        for index in cursors.indices where !cursors[index].exhausted && waiting(cursors[index].rank) < Self.lowWater {
            let page: [FileRecord]
            switch source {
            case let .journal(journal, pairId):
                page = try await journal.pendingJobs(pairId: pairId, queue: cursors[index].queue,
                                                     after: cursors[index].after, limit: pageSize)
            case let .list(byQueue):
                page = (byQueue[cursors[index].queue] ?? [])
                    .sorted { $0.path.precedesInUTF8Order($1.path) }
            }
            cursors[index].after = page.last?.path ?? cursors[index].after
            cursors[index].exhausted = page.count < pageSize
            loaded += page
        }
        return loaded
    }
}
