import FerryPluginAPI
import Foundation

/// Runs a plan's jobs: starts them in the order `SchedulerState` says, retries retryable
/// failures with the configured backoff, fails the rest for good (`syncError`), and
/// reports every outcome to the journal, the progress counters and the event sink.
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

    private enum Event: Sendable {
        case finished(SchedulerState.Job, FileRecord, Result<TransferExecutor.Success, TransferExecutor.Failure>, Int64)
        case timer
    }

    func run(jobs: [FileRecord], summary: inout RunSummary) async throws(JournalError) {
        var records: [String: FileRecord] = [:]
        var state = SchedulerState(queueCaps: queueCaps, globalCap: globalCap)
        for job in jobs {
            records[job.path] = job
            let rank = classifier.rank(of: job.queue)
            state.add(SchedulerState.Job(path: job.path, rank: rank))
            progress.expect(queue: job.queue, rank: rank, files: 1, bytes: job.transferBytes)
        }
        let clock = ContinuousClock()
        let start = clock.now
        func elapsed() -> Double {
            start.duration(to: clock.now).inSeconds
        }

        var journalFailure: JournalError?
        await withTaskGroup(of: Event.self) { group in
            var timerPending = false
            while journalFailure == nil {
                for job in state.start(now: elapsed()) {
                    guard let record = records[job.path] else { continue }
                    progress.began(queue: record.queue)
                    let observer = JobObserver(queue: record.queue, progress: progress, throttle: throttle)
                    group.addTask { [executor] in
                        let outcome = await executor.attempt(record, observer: observer)
                        return .finished(job, record, outcome, observer.bytesMoved)
                    }
                }
                if state.isIdle { break }
                if !timerPending, state.runningCount < globalCap, let next = state.nextReadyTime {
                    timerPending = true
                    let delay = max(0, next - elapsed())
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(Int64(delay * 1000) + 1))
                        return .timer
                    }
                }
                guard let event = await group.next() else { break }
                switch event {
                case .timer:
                    timerPending = false
                case let .finished(job, record, outcome, moved):
                    state.finish(job)
                    do throws(JournalError) {
                        if let (retryAt, updated) = try await handle(record, outcome, moved: moved, summary: &summary, now: elapsed()) {
                            records[job.path] = updated
                            state.add(job, readyAt: retryAt)
                        }
                    } catch {
                        journalFailure = error
                    }
                }
            }
            group.cancelAll()
        }
        if let journalFailure { throw journalFailure }
    }

    /// Books one outcome; returns when to try again and the record to try with, or nil when
    /// the job is over.
    private func handle(
        _ record: FileRecord, _ outcome: Result<TransferExecutor.Success, TransferExecutor.Failure>,
        moved: Int64, summary: inout RunSummary, now: Double
    ) async throws(JournalError) -> (Double, FileRecord)? {
        switch outcome {
        case let .success(.transferred(updated, bytes, resumedFrom)):
            progress.ended(queue: record.queue, succeeded: true, skippedBytes: resumedFrom)
            let direction = record.action ?? .upload
            if direction == .download {
                summary.downloadedFiles += 1
                summary.downloadedBytes += bytes
            } else {
                summary.uploadedFiles += 1
                summary.uploadedBytes += bytes
            }
            summary.resumedBytes += resumedFrom
            sink.emit(.transferred(path: updated.path, queue: updated.queue, direction: direction,
                                   bytes: bytes, resumedFrom: resumedFrom))
            return nil
        case .success(.deleted):
            progress.ended(queue: record.queue, succeeded: true)
            summary.deletedFiles += 1
            sink.emit(.deleted(path: record.path, queue: record.queue, side: record.action ?? .deleteRemote))
            return nil
        case .success(.vanished):
            progress.ended(queue: record.queue, succeeded: true)
            summary.skippedFiles += 1
            sink.emit(.skipped(path: record.path, reason: "vanished before it could be transferred"))
            return nil
        case let .failure(.journal(error)):
            progress.ended(queue: record.queue, succeeded: false)
            throw error
        case let .failure(.backend(error)):
            let failures = record.attempts + 1
            let retryable = error.isRetryable && retry.allowsAnotherAttempt(afterFailures: failures)
            progress.ended(queue: record.queue, succeeded: false, final: !retryable)
            progress.rewind(queue: record.queue, bytes: moved)
            var updated = try await journal.record(pairId: record.pairId, path: record.path) ?? record
            updated.attempts = failures
            updated.lastError = error.description
            updated.updatedAt = Date().timeIntervalSince1970
            if retryable {
                let seconds = retry.delay(afterFailures: failures, for: error).inSeconds
                updated.status = (record.action ?? .upload).pendingStatus
                updated.action = record.action
                updated.nextAttemptAt = Date().timeIntervalSince1970 + seconds
                try await journal.save(updated)
                sink.emit(.failed(path: record.path, queue: record.queue, message: error.description,
                                  willRetry: true, attempt: failures))
                return (now + seconds, updated)
            }
            updated.status = .syncError
            updated.nextAttemptAt = nil
            try await journal.save(updated)
            summary.failedFiles += 1
            summary.failures.append(RunSummary.Failure(path: record.path, message: error.description))
            sink.emit(.failed(path: record.path, queue: record.queue, message: error.description,
                              willRetry: false, attempt: failures))
            return nil
        }
    }
}
