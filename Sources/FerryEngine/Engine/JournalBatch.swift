import FerryJournal
import FerryPlanning

/// Results of finished jobs waiting to be committed together: one transaction for many
/// files instead of one per file. The events that report them wait with them, so that a
/// file reported as transferred is always one the journal knows about. When it is
/// committed is the engine's state machine's decision.
struct JournalBatch: Sendable {
    private var upserts: [FileRecord] = []
    private var events: [RunEvent] = []
    private var deletions: [(pairId: Int64, path: String)] = []

    package var isEmpty: Bool { upserts.isEmpty && deletions.isEmpty }
    package var count: Int { upserts.count + deletions.count }

    package mutating func save(_ record: FileRecord, reporting event: RunEvent? = nil) {
        upserts.append(record)
        if let event { events.append(event) }
    }

    package mutating func remove(pairId: Int64, path: String, reporting event: RunEvent? = nil) {
        deletions.append((pairId, path))
        if let event { events.append(event) }
    }

    /// Commits everything waiting (in one transaction per `Journal.batchSize` rows), empties
    /// the batch, and returns the events of what was committed, to be reported now.
    package mutating func flush(to journal: Journal) async throws(JournalError) -> [RunEvent] {
        guard !isEmpty else { return [] }
        let pending = upserts
        let removed = deletions
        let reported = events
        upserts.removeAll(keepingCapacity: true)
        deletions.removeAll(keepingCapacity: true)
        events.removeAll(keepingCapacity: true)
        // In a task of its own: results that happened are recorded even while the run is
        // being cancelled (the daemon stopping), and GRDB starts no work in a cancelled task.
        let outcome: Result<Void, JournalError> = await Task { () async -> Result<Void, JournalError> in
            do throws(JournalError) {
                try await journal.bookResults(pending, removing: removed)
                return .success(())
            } catch {
                return .failure(error)
            }
        }.value
        try outcome.get()
        return reported
    }
}
