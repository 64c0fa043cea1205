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
struct TransferEngine: Sendable {
    let executor: TransferExecutor
    /// The run's one journal writer, shared with the executor's marks.
    let writer: RunJournalWriter
    let classifier: QueueClassifier
    let queueCaps: [Int]
    let globalCap: Int
    let retry: RetryPolicy
    let throttle: ByteThrottle?
    let progress: RunProgress
    let sink: any RunEventSink
    /// Limits shared with other runs (a remote's timetable), on top of `throttle`.
    var sharedThrottles: [ByteThrottle] = []
    /// Limits per queue, shared with other runs.
    var queueThrottles: [String: ByteThrottle] = [:]
    /// More jobs while the engine runs (files that settled in a watched folder).
    var feed: JobFeed?
    var clock: any FerryClock = SystemClock()

    static let batchWindow = 0.25
    static let batchLimit = 256
    /// The most small uploads to a local disk (or downloads from one) that start as one
    /// batch, in one trip to a blocking thread (`TransferExecutor.attempt(batch:)`).
    static let transferBatchSize = 16
    /// The most small transfers that wait to be put in place while a batch is being put in
    /// place: past it, no job starts until that batch is in place, so what waits stays
    /// bounded however slow the disk's flush.
    static let placementLimit = 256

    private typealias Outcome = Result<TransferExecutor.Success, TransferExecutor.Failure>

    private enum Event: Sendable {
        case finished(SchedulerState.Job, FileRecord, Outcome, Int64)
        /// A batch (remote deletes, small uploads) is over: each job's outcome and bytes moved.
        case finishedBatch([(job: SchedulerState.Job, record: FileRecord, outcome: Outcome, moved: Int64)])
        case timer
        case probed(BackendError?)
        /// A commit is over.
        case committed(JournalError?)
        /// A batch of small transfers is in place (or not): what to book.
        case placed(PlacementBatch.Placed)
        case fed([FileRecord])
    }

    /// What the shell keeps per job between an event and the machine's actions.
    private struct Jobs {
        /// The jobs loaded and not yet over, by path.
        var records: [String: FileRecord] = [:]
        /// Jobs that reached the engine other than through the pages (follow-ups of conflict
        /// renames, files fed in by the watcher while the run goes on): the page reader may
        /// meet their rows later and must not start them twice.
        var takenOutsidePages: Set<String> = []
        /// Successful attempts, until the machine says to book them.
        var successes: [String: TransferExecutor.Success] = [:]
        /// The error of each job whose last attempt failed.
        var errors: [String: BackendError] = [:]

        /// Records loaded or fed in, as the machine's jobs; records already known are left out.
        /// Those `batches` accepts are marked batchable.
        mutating func take(_ loaded: [FileRecord], outsidePages: Bool, classifier: QueueClassifier,
                           progress: RunProgress, batches: (FileRecord) -> Bool) -> [SchedulerState.Job] {
            var taken: [SchedulerState.Job] = []
            for record in loaded {
                let rank = classifier.rank(of: record.queue)
                if outsidePages {
                    guard records[record.path] == nil else { continue }
                    takenOutsidePages.insert(record.path)
                    progress.expect(queue: record.queue, rank: rank, files: 1, bytes: record.transferBytes)
                } else if takenOutsidePages.contains(record.path) {
                    continue
                }
                records[record.path] = record
                taken.append(SchedulerState.Job(path: record.path, rank: rank,
                                                batchable: batches(record),
                                                small: record.transferBytes < TransferExecutor.resumableSize))
            }
            return taken
        }
    }

    /// Runs the jobs `pages` reads from the journal. Only the jobs loaded (a few pages),
    /// running, or waiting for a retry are in memory.
    func run(pages: PendingJobPages, summary: inout RunSummary) async throws(JournalError) {
        var pages = pages
        var jobs = Jobs()
        // Remote deletes go to the backend as many to a request as it takes (S3: 1,000).
        let deleteBatchSize = executor.pair.backend.capabilities.maxDeleteBatch
        let batchesDeletes = deleteBatchSize > 1
        // Small uploads to a local disk and small downloads from one start in batches too:
        // each file's own trips to a blocking thread and back cost more than copying it (a
        // third of a first push of 20,000 photos, a fifth of their pull).
        let batchesTransfers = executor.stagesUploads || executor.fetchesDirectly
        let executor = self.executor
        func batches(_ record: FileRecord) -> Bool {
            executor.joinsBatch(record, deletesInBatches: batchesDeletes)
        }
        var machine = TransferStateMachine(queueCaps: queueCaps, globalCap: globalCap, retry: retry,
                                           batchWindow: Self.batchWindow, batchLimit: Self.batchLimit,
                                           jobBatchSize: max(deleteBatchSize, batchesTransfers ? Self.transferBatchSize : 1))
        for entry in pages.totals {
            progress.expect(queue: entry.queue, rank: entry.rank, files: entry.total.files, bytes: entry.total.bytes)
        }
        let writer = self.writer
        let clock = self.clock
        func now() -> Double { clock.now() }
        let backend = executor.pair.backend
        let remoteName = executor.pair.remoteLocation

        /// Small uploads written under their temporary names and small downloads in their
        /// partial files: put in place together (flushed once, renamed) beside the jobs,
        /// then booked and committed. One batch is placed at a time.
        var waiting = PlacementBatch()
        /// The uploads of the last batch placed, named but with their names not yet
        /// flushed: the next batch's flush covers them, and they are booked after it.
        var unflushed: PlacementBatch.Unflushed?

        var journalFailure: JournalError?
        // Cancelling the run (the daemon stopping) stops new jobs and cancels the running
        // transfers, which stop at their next chunk; their journal rows stay as they are
        // (`uploading` with the version their partial bytes belong to), which is the
        // resumable point the next run continues from.
        let running = RunningTransfers()
        await withTaskCancellationHandler {
        await withTaskGroup(of: Event.self) { group in
            var timerAt: Double?
            var stopSent = false
            var allQueuedSent = false
            var lastProbeFailure: BackendError?
            var commitsRunning = 0
            var placing: Task<PlacementBatch.Placed, Never>?
            var placementWanted = false

            /// Carries out the machine's actions, in order.
            func perform(_ actions: [TransferStateMachine.Action]) async throws(JournalError) {
                var followUps: [FileRecord] = []
                for action in actions {
                    switch action {
                    case let .start(job):
                        guard let record = jobs.records[job.path] else { continue }
                        await waitForRoom()
                        progress.began(queue: record.queue, path: record.path)
                        let observer = JobObserver(queue: record.queue, progress: progress, throttle: throttle,
                                                   sharedThrottles: sharedThrottles + (queueThrottles[record.queue].map { [$0] } ?? []))
                        running.add(observer)
                        group.addTask { [executor, progress] in
                            defer {
                                running.remove(observer)
                                progress.left(queue: record.queue, path: record.path)
                            }
                            let outcome = await executor.attempt(record, observer: observer)
                            return .finished(job, record, outcome, observer.bytesMoved)
                        }
                    case let .startBatch(batch):
                        await waitForRoom()
                        let members = batch.compactMap { job in
                            jobs.records[job.path].map { record in
                                (job: job, record: record,
                                 observer: JobObserver(queue: record.queue, progress: progress, throttle: throttle,
                                                       sharedThrottles: sharedThrottles + (queueThrottles[record.queue].map { [$0] } ?? [])))
                            }
                        }
                        for member in members {
                            progress.began(queue: member.record.queue, path: member.record.path)
                            running.add(member.observer)
                        }
                        group.addTask { [executor, progress] in
                            defer {
                                for member in members {
                                    running.remove(member.observer)
                                    progress.left(queue: member.record.queue, path: member.record.path)
                                }
                            }
                            let outcomes = await executor.attempt(batch: members.map { ($0.record, $0.observer) })
                            return .finishedBatch(members.map { member in
                                (member.job, member.record, outcomes[member.record.path]
                                    ?? .failure(.backend(BackendError(.io, "the batch gave no outcome", path: member.record.path))),
                                 member.observer.bytesMoved)
                            })
                        }
                    case let .recordSuccess(job):
                        guard let record = jobs.records.removeValue(forKey: job.path),
                              let success = jobs.successes.removeValue(forKey: job.path) else { continue }
                        jobs.errors[job.path] = nil
                        if case let .staged(updated, upload) = success {
                            waiting.uploads.append((record, updated, upload))
                        } else if case let .fetched(download) = success {
                            waiting.downloads.append((record, download))
                        } else {
                            followUps += await bookSuccess(record, success, summary: &summary)
                        }
                    case let .recordRetry(job, failures, delay):
                        await bookRetry(job, failures: failures, notBefore: wallClock() + delay)
                    case let .setAside(job, failures, pass):
                        // Due at once for a later run: this run's next pass is the machine's.
                        await bookRetry(job, failures: failures, notBefore: wallClock(),
                                        note: "tried again after the other files (pass \(pass) of \(retry.passes))")
                    case let .recordFailure(job, failures):
                        guard let record = jobs.records.removeValue(forKey: job.path) else { continue }
                        let error = jobs.errors.removeValue(forKey: job.path).map(\.description) ?? "failed"
                        await failForGood(record, failures: failures, message: error, summary: &summary)
                    case let .handBack(job):
                        guard let record = jobs.records.removeValue(forKey: job.path) else { continue }
                        jobs.errors[job.path] = nil
                        let message = "the remote \(remoteName) did not answer for \(Int(machine.gaveUpAfter ?? 0)) s; "
                            + "the file stays queued: run again when the server is back"
                        await handBack(record, message: message, summary: &summary)
                    case let .dropStopped(job):
                        jobs.records[job.path] = nil
                        jobs.errors[job.path] = nil
                    case let .park(job):
                        // The attempt may have got through before the connection failed: the
                        // next one looks at the target first.
                        let error = jobs.errors[job.path]?.description
                        jobs.records[job.path]?.lastError = error
                    case .probe:
                        group.addTask {
                            do throws(BackendError) {
                                try await backend.checkReachable()
                                return .probed(nil)
                            } catch {
                                return .probed(error.suggestsOutage ? error : nil)
                            }
                        }
                    case .commit:
                        startCommit()
                        startPlacement()
                    case let .reportOffline(nextProbeIn):
                        sink.emit(.remoteOffline(remote: remoteName, message: lastProbeFailure?.description ?? "no answer",
                                                 nextProbeSeconds: nextProbeIn))
                    case let .reportOnline(offlineSeconds):
                        sink.emit(.remoteOnline(remote: remoteName, offlineSeconds: offlineSeconds))
                    }
                }
                // A rename's follow-up transfers run in this same run. Their rows are
                // pending in the journal too: the page reader must not hand them out again.
                if !followUps.isEmpty {
                    let arrived = jobs.take(followUps, outsidePages: true, classifier: classifier, progress: progress,
                                            batches: batches)
                    try await perform(machine.handle(.jobsArrived(arrived), now: now()))
                }
            }

            /// Commits what is booked while the jobs go on: waiting for the journal's
            /// transaction held every job's start back for it.
            func startCommit() {
                commitsRunning += 1
                group.addTask { [writer] in
                    do throws(JournalError) {
                        try await writer.commit()
                        return .committed(nil)
                    } catch {
                        return .committed(error)
                    }
                }
            }

            /// Books a failed attempt that is tried again, and reports it.
            func bookRetry(_ job: SchedulerState.Job, failures: Int, notBefore: Double, note: String? = nil) async {
                guard let record = jobs.records[job.path] else { return }
                jobs.records[job.path] = await bookFailedAttempt(record, failures: failures,
                                                                 error: jobs.errors[job.path].map(\.description) ?? "failed",
                                                                 notBefore: notBefore, note: note)
            }

            /// Puts the waiting small transfers in place beside the jobs, flushing the names
            /// of the batch before; they are booked and committed when the batch is over
            /// (`placed`). One batch at a time: a commit meanwhile has the next batch start
            /// as soon as this one is over.
            func startPlacement() {
                guard !waiting.isEmpty || unflushed != nil else { return }
                guard placing == nil else {
                    placementWanted = true
                    return
                }
                let batch = waiting
                let earlier = unflushed
                waiting = PlacementBatch()
                unflushed = nil
                let task = Task { [self] in await place(batch, after: earlier) }
                placing = task
                group.addTask { .placed(await task.value) }
            }

            /// Before a job starts: waits for the batch being put in place when too many
            /// small transfers already wait for their turn (`placementLimit`).
            func waitForRoom() async {
                if let placing, waiting.count >= Self.placementLimit { _ = await placing.value }
            }

            /// Hands an attempt's outcome to the machine (a failed one with its error kept for
            /// the booking) and carries out what it decides.
            func settle(_ job: SchedulerState.Job, _ record: FileRecord, _ outcome: Outcome,
                        moved: Int64) async throws(JournalError) {
                switch outcome {
                case let .success(success):
                    jobs.successes[job.path] = success
                    try await perform(machine.handle(.jobSucceeded(job), now: now()))
                case let .failure(.journal(error)):
                    progress.ended(queue: record.queue, succeeded: false)
                    throw error
                case let .failure(.backend(error)):
                    progress.ended(queue: record.queue, succeeded: false, final: false)
                    progress.rewind(queue: record.queue, bytes: moved)
                    jobs.errors[job.path] = error
                    let failure = TransferStateMachine.Failure(error)
                    try await perform(machine.handle(.jobFailed(job, failures: record.attempts + 1, failure), now: now()))
                }
            }

            if let feed {
                group.addTask { .fed(await feed.next()) }
            }
            do throws(JournalError) {
                while true {
                    if Task.isCancelled && !stopSent {
                        stopSent = true
                        try await perform(machine.handle(.stopRequested, now: now()))
                    }
                    // Jobs still in the journal, read while the machine takes them. After it
                    // gave up on an offline backend it hands each back at once, so then the
                    // pages are read to the end.
                    while machine.acceptsJobs, !pages.isExhausted {
                        let loaded = try await pages.refill(waiting: { machine.readyCount(rank: $0) })
                        let arrived = jobs.take(loaded, outsidePages: false, classifier: classifier, progress: progress,
                                                batches: batches)
                        if !arrived.isEmpty {
                            try await perform(machine.handle(.jobsArrived(arrived), now: now()))
                        }
                        if !machine.isAbandoning { break }
                    }
                    if pages.isExhausted && !allQueuedSent {
                        allQueuedSent = true
                        try await perform(machine.handle(.allJobsQueued, now: now()))
                    }
                    if machine.isIdle && commitsRunning == 0 && placing == nil && (stopSent || pages.isExhausted) {
                        // The last small uploads are put in place while the run still takes
                        // jobs: one whose new name another device took first is decided
                        // again, and its job runs in this run.
                        guard !stopSent, !waiting.uploads.isEmpty else { break }
                        startPlacement()
                    }

                    // One timer at a time, for the earliest moment the machine asked for.
                    if let wake = machine.nextWake, timerAt.map({ wake < $0 - 0.001 }) ?? true {
                        timerAt = wake
                        group.addTask {
                            await clock.sleep(until: wake)
                            return .timer
                        }
                    }
                    guard let event = await group.next() else { break }
                    // A cancelled transfer ends with an error: the machine must know the
                    // run is stopping before it hears of it, or it books a failure.
                    if Task.isCancelled && !stopSent {
                        stopSent = true
                        try await perform(machine.handle(.stopRequested, now: now()))
                    }
                    switch event {
                    case .timer:
                        if let at = timerAt, at <= now() + 0.001 { timerAt = nil }
                        try await perform(machine.handle(.timerFired, now: now()))
                    case let .fed(records):
                        if !Task.isCancelled {
                            let arrived = jobs.take(records, outsidePages: true, classifier: classifier, progress: progress,
                                                    batches: batches)
                            feed?.accepted(records)
                            try await perform(machine.handle(.jobsArrived(arrived), now: now()))
                        }
                        if let feed, !records.isEmpty, !Task.isCancelled {
                            group.addTask { .fed(await feed.next()) }
                        }
                    case let .finished(job, record, outcome, moved):
                        try await settle(job, record, outcome, moved: moved)
                    case let .finishedBatch(members):
                        // Each file of the batch is its own job to the machine: booked,
                        // retried or failed on its own.
                        for member in members {
                            try await settle(member.job, member.record, member.outcome, moved: member.moved)
                        }
                    case let .committed(failure):
                        commitsRunning -= 1
                        if let failure { throw failure }
                    case let .placed(placed):
                        placing = nil
                        unflushed = placed.unflushed
                        // The names just made wait for the next batch's flush, which the
                        // next commit brings; with nothing waiting, none may come, so they
                        // are flushed on their own now.
                        if placementWanted || waiting.isEmpty {
                            placementWanted = false
                            startPlacement()
                        }
                        let followUps = await book(placed.outcome, summary: &summary)
                        startCommit()
                        if !followUps.isEmpty {
                            let arrived = jobs.take(followUps, outsidePages: true, classifier: classifier, progress: progress,
                                                    batches: batches)
                            try await perform(machine.handle(.jobsArrived(arrived), now: now()))
                        }
                    case let .probed(failure):
                        lastProbeFailure = failure
                        try await perform(machine.handle(.probeAnswered(reachable: failure == nil), now: now()))
                    }
                }
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
        let late = await book(await placeAll(waiting, after: unflushed), summary: &summary)
        if !late.isEmpty {
            // Decided again in the last batch, after the jobs ended: their jobs wait in the
            // journal, and exit 0 must not say they were done.
            summary.incomplete.append("\(late.count) file(s) another device wrote while this run placed them "
                + "wait for the next run (decided again: \(late.map(\.path).prefix(3).joined(separator: ", ")))")
        }
        try await writer.commit()
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
    func failForGood(_ record: FileRecord, failures: Int, message: String, summary: inout RunSummary) async {
        var updated = await writer.current(record)
        updated.failForGood(failures: failures, error: message, at: wallClock())
        await writer.book(updated)
        progress.countFailure(queue: record.queue)
        summary.failedFiles += 1
        summary.failures.append(RunSummary.Failure(path: record.path, message: message))
        sink.emit(.failed(path: record.path, queue: record.queue, message: message, willRetry: false, attempt: failures))
    }

    func handBack(_ record: FileRecord, message: String, summary: inout RunSummary) async {
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
