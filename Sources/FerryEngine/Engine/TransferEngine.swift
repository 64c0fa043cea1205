import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

/// Runs a plan's jobs. Every decision (which job starts next, retry or fail for good, an
/// outage and its probes, when results are committed, when the run is over) is
/// `TransferStateMachine`'s; this shell carries out its actions (start an attempt, book a
/// result, probe the backend, commit) and turns what happens (an attempt ended, a probe
/// answered, a timer went off) into its events. Results go to the journal, the progress
/// counters and the event sink.
///
/// Results are committed in groups (`RunJournalWriter`): at most `batchWindow` seconds or
/// `batchLimit` results wait in memory. A kill in that window loses only the record of
/// transfers that did happen; the next run finds those files on the other side and adopts
/// them, or sends them again where it cannot tell.
///
/// Remote deletes that destroy the copy (no trash) start as batches of up to the backend's
/// `maxDeleteBatch` from the jobs already loaded, one `Backend.deleteFiles` call each; small
/// uploads to a local disk and small downloads from one start as batches of
/// `transferBatchSize`, each batch in one trip to a blocking thread. Every file still has
/// its own outcome, booking and retries. Those small transfers are put in place (flushed
/// once, renamed) in batches beside the jobs (`TransferEngine+Placement.swift`).
package struct TransferEngine: Sendable {
    package let executor: TransferExecutor
    /// The run's one journal writer, shared with the executor's marks.
    package let writer: RunJournalWriter
    package let classifier: QueueClassifier
    package let queueCaps: [Int]
    package let globalCap: Int
    package let retry: RetryPolicy
    package let throttle: ByteThrottle?
    package let progress: RunProgress
    package let sink: any RunEventSink
    /// Limits shared with other runs (a remote's timetable), on top of `throttle`.
    package var sharedThrottles: [ByteThrottle] = []
    /// Limits per queue, shared with other runs.
    package var queueThrottles: [String: ByteThrottle] = [:]
    /// More jobs while the engine runs (files that settled in a watched folder).
    package var feed: JobFeed?
    package var clock: any FerryClock = SystemClock()

    package init(executor: TransferExecutor, writer: RunJournalWriter, classifier: QueueClassifier, queueCaps: [Int],
                 globalCap: Int, retry: RetryPolicy, throttle: ByteThrottle?, progress: RunProgress,
                 sink: any RunEventSink, sharedThrottles: [ByteThrottle] = [],
                 queueThrottles: [String: ByteThrottle] = [:], feed: JobFeed? = nil, clock: any FerryClock = SystemClock()) {
        self.executor = executor
        self.writer = writer
        self.classifier = classifier
        self.queueCaps = queueCaps
        self.globalCap = globalCap
        self.retry = retry
        self.throttle = throttle
        self.progress = progress
        self.sink = sink
        self.sharedThrottles = sharedThrottles
        self.queueThrottles = queueThrottles
        self.feed = feed
        self.clock = clock
    }

    package static let batchWindow = 0.25
    package static let batchLimit = 256
    /// The most small uploads to a local disk (or downloads from one) that start as one
    /// batch, in one trip to a blocking thread (`TransferExecutor.attempt(batch:)`).
    package static let transferBatchSize = 16
    /// The most small uploads sent one after the other on one connection as one job
    /// (`TransferExecutor.sendsTogether`). Few, so that the connections finish close
    /// together at the end of a run.
    package static let sentTogether = 4
    /// The largest file sent with others: one whose round trip costs more than its bytes.
    /// A batch reports its files' outcomes once all are sent, so larger files would hold
    /// back every event of the batch, the longer under a bandwidth limit (with 256-400 KB
    /// files under `--bwlimit`, OutageTests' first event came with a whole folder's files).
    /// Without one, four files of this size hold an event back by three round trips at most.
    package static let sentTogetherLimit: Int64 = 64 * 1024
    /// The most small transfers that wait to be put in place while a batch is being put in
    /// place: past it, no job starts until that batch is in place, so what waits stays
    /// bounded however slow the disk's flush.
    package static let placementLimit = 256

    /// Runs the jobs `pages` reads from the journal. Only the jobs loaded (a few pages),
    /// running, or waiting for a retry are in memory.
    package func run(pages: PendingJobPages, summary: inout RunSummary) async throws(JournalError) {
        for entry in pages.totals {
            progress.expect(queue: entry.queue, rank: entry.rank, files: entry.total.files, bytes: entry.total.bytes)
        }
        var loop = Loop(engine: self, pages: pages)
        var journalFailure: JournalError?
        // Cancelling the run (the daemon stopping) stops new jobs and cancels the running
        // transfers, which stop at their next chunk; their journal rows stay as they are
        // (`uploading` with the version their partial bytes belong to), which is the
        // resumable point the next run continues from.
        let running = loop.running
        await withTaskCancellationHandler {
            await withTaskGroup(of: Event.self) { group in
                do throws(JournalError) {
                    try await loop.drive(&group, summary: &summary)
                } catch {
                    journalFailure = error
                }
                feed?.close()
                group.cancelAll()
            }
        } onCancel: {
            running.cancelAll()
        }
        if let journalFailure { throw journalFailure }
        let late = await book(await placeAll(loop.waiting, after: loop.unflushed), summary: &summary)
        if !late.isEmpty {
            // Decided again in the last batch, after the jobs ended: their jobs wait in the
            // journal, and exit 0 must not say they were done.
            summary.incomplete.append("\(late.count) file(s) another device wrote while this run placed them "
                + "wait for the next run (decided again: \(late.map(\.path).prefix(3).joined(separator: ", ")))")
        }
        try await writer.commit()
    }

    /// A transfer's observer: its progress, and the limits on its bytes.
    package func observer(for record: FileRecord) -> JobObserver {
        JobObserver(queue: record.queue, progress: progress, throttle: throttle,
                    sharedThrottles: sharedThrottles + (queueThrottles[record.queue].map { [$0] } ?? []))
    }

    /// Wall-clock seconds, for the times kept in the journal (the machine's clock is
    /// monotonic and starts with the run).
    func wallClock() -> Double { clock.wallTime() }

    /// Books a successful attempt; returns the follow-up jobs it leaves for this run.
    func bookSuccess(_ record: FileRecord, _ success: TransferExecutor.Success,
                             summary: inout RunSummary) async -> [FileRecord] {
        switch success {
        case let .moved(saved, removed, followUps):
            for path in removed { await writer.bookRemoval(pairId: record.pairId, path: path) }
            for (index, row) in saved.enumerated() {
                await writer.book(row, reporting: index == 0
                    ? .moved(path: record.path, queue: record.queue, action: record.action ?? .moveRemote,
                             target: record.moveTarget ?? row.path)
                    : nil)
            }
            progress.ended(queue: record.queue, succeeded: true)
            if record.action == .keepBothLocalLoses || record.action == .keepBothRemoteLoses {
                summary.keptBothFiles += 1
            } else {
                summary.movedFiles += 1
            }
            return followUps
        case .staged, .fetched:
            // Booking it would record a file that is not yet under its name.
            preconditionFailure("a staged upload or fetched download is booked only once in place (publishStaged)")
        case let .transferred(updated, bytes, resumedFrom):
            let direction = record.action ?? .upload
            await writer.book(updated, reporting: .transferred(path: updated.path, queue: updated.queue, direction: direction,
                                                        bytes: bytes, resumedFrom: resumedFrom))
            progress.ended(queue: record.queue, succeeded: true, skippedBytes: resumedFrom)
            if direction == .download {
                summary.downloadedFiles += 1
                summary.downloadedBytes += bytes
            } else {
                summary.uploadedFiles += 1
                summary.uploadedBytes += bytes
            }
            summary.resumedBytes += resumedFrom
        case let .deleted(trashed):
            if trashed { summary.trashedFiles += 1 }
            await writer.bookRemoval(pairId: record.pairId, path: record.path,
                                     reporting: .deleted(path: record.path, queue: record.queue, side: record.action ?? .deleteRemote))
            progress.ended(queue: record.queue, succeeded: true)
            summary.deletedFiles += 1
        case .vanished:
            await writer.bookRemoval(pairId: record.pairId, path: record.path,
                                     reporting: .skipped(path: record.path, reason: "vanished before it could be transferred"))
            progress.ended(queue: record.queue, succeeded: true)
            summary.skippedFiles += 1
        case let .compared(updated, equal):
            progress.ended(queue: record.queue, succeeded: true)
            if equal {
                await writer.book(updated, reporting: .skipped(path: updated.path, reason: "the same bytes on both sides"))
                summary.skippedFiles += 1
            } else if updated.status == .conflict {
                let message = updated.lastError ?? Planner.contentDiffersNote
                await writer.book(updated, reporting: .conflict(path: updated.path, queue: updated.queue, message: message))
                summary.conflictFiles += 1
                summary.conflicts.append(RunSummary.Failure(path: updated.path, message: message))
            } else {
                await writer.book(updated)
                return [updated]
            }
        case let .decidedAgain(updated):
            progress.ended(queue: record.queue, succeeded: true)
            summary.changedDuringRun += 1
            if updated.status == .conflict {
                let message = updated.lastError ?? "changed on both sides"
                await writer.book(updated, reporting: .conflict(path: updated.path, queue: updated.queue, message: message))
                summary.conflictFiles += 1
                summary.conflicts.append(RunSummary.Failure(path: updated.path, message: message))
            } else {
                await writer.book(updated, reporting: .skipped(path: updated.path, reason: updated.lastError
                    ?? "the remote file changed since the listing; decided again"))
                if updated.action != nil { return [updated] }
            }
        }
        return []
    }

    /// Leaves a job queued in the journal (status pending, attempts untouched) and counts it
    /// as not done in this run: the backend was offline for longer than the run waits.
    /// A job that failed and is not tried again until the user says so (`ferry retry`).
    package func failForGood(_ record: FileRecord, failures: Int, message: String, summary: inout RunSummary) async {
        var updated = await writer.current(record)
        updated.failForGood(failures: failures, error: message, at: wallClock())
        await writer.book(updated)
        progress.countFailure(queue: record.queue)
        summary.failedFiles += 1
        summary.failures.append(RunSummary.Failure(path: record.path, message: message))
        sink.emit(.failed(path: record.path, queue: record.queue, message: message, willRetry: false, attempt: failures))
    }

    package func handBack(_ record: FileRecord, message: String, summary: inout RunSummary) async {
        progress.countFailure(queue: record.queue)
        var updated = await writer.current(record)
        updated.handBack(action: record.action ?? .upload, error: message, at: wallClock())
        await writer.book(updated)
        summary.failedFiles += 1
        summary.failures.append(RunSummary.Failure(path: record.path, message: message))
        sink.emit(.failed(path: record.path, queue: record.queue, message: message, willRetry: false,
                          attempt: record.attempts))
    }
}
