import FerryPluginAPI
import Foundation

/// Runs a plan's jobs: starts them in the order `SchedulerState` says, retries retryable
/// failures with the configured backoff, fails the rest for good (`syncError`), waits out
/// backend outages (`OutageTracker`), and reports every outcome to the journal, the
/// progress counters and the event sink.
///
/// Results are committed in groups (`JournalBatch`): at most `batchWindow` seconds or
/// `batchLimit` results wait in memory. A kill in that window loses only the record of
/// transfers that did happen; the next run finds those files on the other side and adopts
/// them, or sends them again where it cannot tell.
struct TransferEngine: Sendable {
    let executor: TransferExecutor
    let journal: Journal
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

    static let batchWindow = 0.25
    static let batchLimit = 512

    private typealias Outcome = Result<TransferExecutor.Success, TransferExecutor.Failure>

    /// A failed job held back while the backend's reachability is in question.
    private struct ParkedJob: Sendable {
        var job: SchedulerState.Job
        var record: FileRecord
        var error: BackendError
        var moved: Int64
    }

    private enum Event: Sendable {
        case finished(SchedulerState.Job, FileRecord, Outcome, Int64)
        case timer
        case probed(BackendError?)
        case fed([FileRecord])
    }

    /// Runs the jobs `pages` reads from the journal. Only the jobs loaded (a few pages),
    /// running, or waiting for a retry are in memory.
    func run(pages: PendingJobPages, summary: inout RunSummary) async throws(JournalError) {
        var pages = pages
        // The jobs loaded and not yet over, by path.
        var records: [String: FileRecord] = [:]
        // Jobs that reached the engine other than through `pages` (follow-ups of conflict
        // renames, files fed in by the watcher while the run goes on): the page reader
        // may meet their rows later and must not start them twice.
        var takenOutsidePages: Set<String> = []
        var state = SchedulerState(queueCaps: queueCaps, globalCap: globalCap)
        for entry in pages.totals {
            progress.expect(queue: entry.queue, rank: entry.rank, files: entry.total.files, bytes: entry.total.bytes)
        }
        let retry = self.retry
        var outage = OutageTracker<ParkedJob>(
            probeDelay: { retry.delay(afterFailures: $0).inSeconds }, giveUpAfter: retry.offlineWait?.inSeconds)
        var batch = JournalBatch()
        let clock = ContinuousClock()
        let start = clock.now
        func elapsed() -> Double {
            start.duration(to: clock.now).inSeconds
        }
        let backend = executor.pair.backend
        let remoteName = executor.pair.remoteLocation

        var journalFailure: JournalError?
        // Cancelling the run (the daemon stopping) stops new jobs and cancels the running
        // transfers, which stop at their next chunk; their journal rows stay as they are
        // (`uploading` with the version their partial bytes belong to), which is the
        // resumable point the next run continues from.
        let running = RunningTransfers()
        await withTaskCancellationHandler {
        await withTaskGroup(of: Event.self) { group in
            var timerAt: Double?
            var probing = false
            // Set once the run stopped waiting for an offline backend: what still fails for
            // want of it is handed back at once instead of waiting again.
            var abandoning = false
            var abandonMessage = ""
            func probe(after delay: Double) {
                probing = true
                group.addTask {
                    if delay > 0.001 { try? await Task.sleep(for: .milliseconds(Int64(delay * 1000))) }
                    do throws(BackendError) {
                        try await backend.checkReachable()
                        return .probed(nil)
                    } catch {
                        return .probed(error.suggestsOutage ? error : nil)
                    }
                }
            }

            if let feed {
                group.addTask { .fed(await feed.next()) }
            }
            while journalFailure == nil {
                let stopping = Task.isCancelled
                if stopping && state.runningCount == 0 { break }
                do throws(JournalError) {
                    // After giving up on an offline backend, the jobs not read yet are
                    // handed back too, without an attempt each.
                    repeat {
                        guard !stopping, outage.isDispatching || abandoning, !pages.isExhausted else { break }
                        for record in try await pages.refill(waiting: { state.readyCount(rank: $0) }) {
                            if takenOutsidePages.contains(record.path) { continue }
                            if abandoning {
                                progress.began(queue: record.queue)
                                try await abandon(record, message: abandonMessage, batch: &batch, summary: &summary)
                            } else {
                                records[record.path] = record
                                state.add(SchedulerState.Job(path: record.path, rank: classifier.rank(of: record.queue)))
                            }
                        }
                    } while abandoning
                } catch {
                    journalFailure = error
                    break
                }
                if outage.isDispatching && !stopping {
                    for job in state.start(now: elapsed()) {
                        guard let record = records[job.path] else { continue }
                        progress.began(queue: record.queue)
                        let observer = JobObserver(queue: record.queue, progress: progress, throttle: throttle,
                                                   sharedThrottles: sharedThrottles + (queueThrottles[record.queue].map { [$0] } ?? []))
                        running.add(observer)
                        group.addTask { [executor] in
                            defer { running.remove(observer) }
                            let outcome = await executor.attempt(record, observer: observer)
                            return .finished(job, record, outcome, observer.bytesMoved)
                        }
                    }
                }
                if state.isIdle && outage.isSettled && !probing && pages.isExhausted { break }

                // One timer at a time, for the earliest of: a delayed retry, the batch's deadline.
                // Once stopping, only the running transfers' ends are awaited.
                var wake: Double?
                if !stopping {
                    if outage.isDispatching, state.runningCount < globalCap, let next = state.nextReadyTime { wake = next }
                    if let deadline = batch.deadline(window: Self.batchWindow, since: start) { wake = min(wake ?? deadline, deadline) }
                }
                if let wake, timerAt.map({ wake < $0 - 0.001 }) ?? true {
                    timerAt = wake
                    let delay = max(0, wake - elapsed())
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(Int64(delay * 1000) + 1))
                        return .timer
                    }
                }
                guard let event = await group.next() else { break }
                do throws(JournalError) {
                    switch event {
                    case .timer:
                        if let at = timerAt, at <= elapsed() + 0.001 { timerAt = nil }
                    case let .fed(jobs):
                        for job in jobs where records[job.path] == nil && !Task.isCancelled {
                            records[job.path] = job
                            takenOutsidePages.insert(job.path)
                            let rank = classifier.rank(of: job.queue)
                            state.add(SchedulerState.Job(path: job.path, rank: rank))
                            progress.expect(queue: job.queue, rank: rank, files: 1, bytes: job.transferBytes)
                        }
                        if let feed, !jobs.isEmpty, !Task.isCancelled {
                            group.addTask { .fed(await feed.next()) }
                        }
                    case let .finished(job, record, outcome, moved):
                        state.finish(job)
                        if Task.isCancelled, case .failure(.backend) = outcome {
                            // Stopped, not failed: the row stays as the attempt left it.
                            progress.ended(queue: record.queue, succeeded: false, final: false)
                            progress.rewind(queue: record.queue, bytes: moved)
                        } else if case let .failure(.backend(error)) = outcome, error.suggestsOutage, abandoning {
                            progress.ended(queue: record.queue, succeeded: false, final: false)
                            progress.rewind(queue: record.queue, bytes: moved)
                            progress.began(queue: record.queue)
                            records[job.path] = nil
                            try await abandon(record, message: error.description, batch: &batch, summary: &summary)
                        } else if case let .failure(.backend(error)) = outcome, error.suggestsOutage {
                            progress.ended(queue: record.queue, succeeded: false, final: false)
                            progress.rewind(queue: record.queue, bytes: moved)
                            // The attempt may have got through before the connection
                            // failed: the next one looks at the target first.
                            records[job.path]?.lastError = error.description
                            if outage.jobFailedSuspiciously(ParkedJob(job: job, record: record, error: error, moved: 0)) {
                                try await commit(&batch)
                                probe(after: 0)
                            }
                        } else {
                            var next: [FileRecord] = []
                            if let (retryAt, updated) = try await handle(record, outcome, moved: moved, batch: &batch,
                                                                         summary: &summary, now: elapsed(), next: &next) {
                                records[job.path] = updated
                                state.add(job, readyAt: retryAt)
                            } else {
                                records[job.path] = nil
                            }
                            // A rename's follow-up transfers run in this same run. Their rows
                            // are pending in the journal too: the page reader must not hand
                            // them out a second time.
                            for followUp in next {
                                let rank = classifier.rank(of: followUp.queue)
                                takenOutsidePages.insert(followUp.path)
                                records[followUp.path] = followUp
                                state.add(SchedulerState.Job(path: followUp.path, rank: rank))
                                progress.expect(queue: followUp.queue, rank: rank, files: 1, bytes: followUp.transferBytes)
                            }
                        }
                    case let .probed(failure):
                        probing = false
                        if Task.isCancelled { break }
                        switch outage.probeAnswered(reachable: failure == nil, now: elapsed()) {
                        case let .falseAlarm(parked):
                            for held in parked {
                                progress.began(queue: held.record.queue)
                                var none: [FileRecord] = []
                                if let (retryAt, updated) = try await handle(
                                    held.record, .failure(.backend(held.error)), moved: 0, batch: &batch,
                                    summary: &summary, now: elapsed(), next: &none) {
                                    records[held.job.path] = updated
                                    state.add(held.job, readyAt: retryAt)
                                } else {
                                    records[held.job.path] = nil
                                }
                            }
                        case let .wentOffline(next):
                            sink.emit(.remoteOffline(remote: remoteName, message: failure?.description ?? "no answer",
                                                     nextProbeSeconds: next - elapsed()))
                            probe(after: next - elapsed())
                        case let .stillOffline(next):
                            probe(after: next - elapsed())
                        case let .backOnline(parked, seconds):
                            sink.emit(.remoteOnline(remote: remoteName, offlineSeconds: seconds))
                            for held in parked { state.add(held.job) }
                        case let .gaveUp(parked, seconds):
                            abandoning = true
                            abandonMessage = "the remote \(remoteName) did not answer for \(Int(seconds)) s; "
                                + "the file stays queued: run again when the server is back"
                            let waiting = parked.map(\.job) + state.drainWaiting()
                            for job in waiting {
                                guard let record = records.removeValue(forKey: job.path) else { continue }
                                progress.began(queue: record.queue)
                                try await abandon(record, message: abandonMessage, batch: &batch, summary: &summary)
                            }
                        }
                    }
                    if batch.isDue(window: Self.batchWindow, limit: Self.batchLimit) {
                        try await commit(&batch)
                    }
                } catch {
                    journalFailure = error
                }
            }
            feed?.close()
            group.cancelAll()
        }
        } onCancel: {
            running.cancelAll()
        }
        if let journalFailure { throw journalFailure }
        try await commit(&batch)
    }

    /// Writes the waiting results and reports them.
    private func commit(_ batch: inout JournalBatch) async throws(JournalError) {
        for event in try await batch.flush(to: journal) { sink.emit(event) }
    }

    /// Books one outcome; returns when to try again and the record to try with, or nil when
    /// the job is over.
    private func handle(
        _ record: FileRecord, _ outcome: Outcome, moved: Int64, batch: inout JournalBatch,
        summary: inout RunSummary, now: Double, next: inout [FileRecord]
    ) async throws(JournalError) -> (Double, FileRecord)? {
        switch outcome {
        case let .success(.moved(saved, removed, followUps)):
            for path in removed { batch.remove(pairId: record.pairId, path: path) }
            for (index, row) in saved.enumerated() {
                batch.save(row, reporting: index == 0
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
            next += followUps
            return nil
        case let .success(.transferred(updated, bytes, resumedFrom)):
            let direction = record.action ?? .upload
            batch.save(updated, reporting: .transferred(path: updated.path, queue: updated.queue, direction: direction,
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
            return nil
        case let .success(.deleted(trashed)):
            if trashed { summary.trashedFiles += 1 }
            batch.remove(pairId: record.pairId, path: record.path,
                         reporting: .deleted(path: record.path, queue: record.queue, side: record.action ?? .deleteRemote))
            progress.ended(queue: record.queue, succeeded: true)
            summary.deletedFiles += 1
            return nil
        case .success(.vanished):
            batch.remove(pairId: record.pairId, path: record.path,
                         reporting: .skipped(path: record.path, reason: "vanished before it could be transferred"))
            progress.ended(queue: record.queue, succeeded: true)
            summary.skippedFiles += 1
            return nil
        case let .failure(.journal(error)):
            progress.ended(queue: record.queue, succeeded: false)
            throw error
        case let .failure(.backend(error)):
            let failures = record.attempts + 1
            let retryable = error.isRetryable && retry.allowsAnotherAttempt(afterFailures: failures)
            progress.ended(queue: record.queue, succeeded: false, final: !retryable)
            progress.rewind(queue: record.queue, bytes: moved)
            var updated = try await current(record, batch: &batch)
            updated.attempts = failures
            updated.lastError = error.description
            updated.updatedAt = Date().timeIntervalSince1970
            if retryable {
                let seconds = retry.delay(afterFailures: failures, for: error).inSeconds
                updated.status = (record.action ?? .upload).pendingStatus
                updated.action = record.action
                updated.nextAttemptAt = Date().timeIntervalSince1970 + seconds
                batch.save(updated)
                sink.emit(.failed(path: record.path, queue: record.queue, message: error.description,
                                  willRetry: true, attempt: failures))
                return (now + seconds, updated)
            }
            updated.status = .syncError
            updated.nextAttemptAt = nil
            batch.save(updated)
            summary.failedFiles += 1
            summary.failures.append(RunSummary.Failure(path: record.path, message: error.description))
            sink.emit(.failed(path: record.path, queue: record.queue, message: error.description,
                              willRetry: false, attempt: failures))
            return nil
        }
    }

    /// Leaves a job queued in the journal (status pending, attempts untouched) and counts it
    /// as not done in this run: the backend was offline for longer than the run waits.
    private func abandon(_ record: FileRecord, message: String, batch: inout JournalBatch,
                         summary: inout RunSummary) async throws(JournalError) {
        progress.ended(queue: record.queue, succeeded: false)
        var updated = try await current(record, batch: &batch)
        updated.status = (record.action ?? .upload).pendingStatus
        updated.action = record.action
        updated.lastError = message
        updated.nextAttemptAt = nil
        updated.updatedAt = Date().timeIntervalSince1970
        batch.save(updated)
        summary.failedFiles += 1
        summary.failures.append(RunSummary.Failure(path: record.path, message: message))
        sink.emit(.failed(path: record.path, queue: record.queue, message: message, willRetry: false,
                          attempt: record.attempts))
    }

    /// The journal's row for a job (the executor may have written it during the attempt),
    /// after any results still waiting in the batch are committed.
    private func current(_ record: FileRecord, batch: inout JournalBatch) async throws(JournalError) -> FileRecord {
        try await commit(&batch)
        return try await journal.record(pairId: record.pairId, path: record.path) ?? record
    }
}
