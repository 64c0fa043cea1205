import FerryJournal
import FerryPlanning

/// The one writer to the journal while a run's jobs execute. The engine books results here
/// (committed in groups, their events reported after the commit), and the executor writes
/// its marks here (a large file's `uploading`/`downloading` row, which must be on disk
/// before a byte moves). Because every write of the phase goes through this actor, the
/// engine knows the row a failed attempt left without reading it back from the database.
package actor RunJournalWriter {
    private let journal: Journal
    private let sink: any RunEventSink
    private var batch = JournalBatch()
    /// The rows the executor marked, by path, until the job's result is booked.
    private var marked: [String: FileRecord] = [:]
    /// The commit under way: the next one waits for it, so rows reach the database in the
    /// order they were booked (a retry's row never lands after the next attempt's mark).
    private var inFlight: Task<Result<[RunEvent], JournalError>, Never>?

    package init(journal: Journal, sink: any RunEventSink) {
        self.journal = journal
        self.sink = sink
    }

    /// Books a row to write with the next commit, and the event that reports it then.
    package func book(_ record: FileRecord, reporting event: RunEvent? = nil) {
        marked[record.path] = nil
        batch.save(record, reporting: event)
    }

    /// Books a row's removal with the next commit.
    func bookRemoval(pairId: Int64, path: String, reporting event: RunEvent? = nil) {
        marked[path] = nil
        batch.remove(pairId: pairId, path: path, reporting: event)
    }

    /// Writes what is booked, then reports it.
    package func commit() async throws(JournalError) {
        // Taken out before the await: the actor may book more while the commit runs.
        let taken = batch
        batch = JournalBatch()
        let previous = inFlight
        let journal = self.journal
        let task = Task { () async -> Result<[RunEvent], JournalError> in
            _ = await previous?.value
            var pending = taken
            do throws(JournalError) {
                return .success(try await pending.flush(to: journal))
            } catch {
                return .failure(error)
            }
        }
        inFlight = task
        for event in try await task.value.get() { sink.emit(event) }
    }

    /// Writes a mark now, after what is booked: the row an interrupted transfer continues
    /// from must be on disk before the transfer starts.
    func markNow(_ record: FileRecord) async throws(JournalError) {
        batch.save(record)
        marked[record.path] = record
        try await commit()
    }

    /// The row as the journal now holds it for a job: its mark if the executor wrote one,
    /// else the row the job started from.
    package func current(_ record: FileRecord) -> FileRecord {
        marked[record.path] ?? record
    }
}
