import FerryJournal
import FerryPlanning
import FerryPluginAPI

extension TransferEngine {
    typealias Outcome = Result<TransferExecutor.Success, TransferExecutor.Failure>

    /// What happened, as the child tasks of a run report it.
    enum Event: Sendable {
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

    /// The shell of one run: it turns events into the machine's events and carries out the
    /// machine's actions. What it keeps is what the actions need (the jobs' records, their
    /// successes and errors, the staged transfers waiting for their placement), not
    /// decisions: when to start, commit, place or end is the machine's.
    struct Loop {
        package let engine: TransferEngine
        package var machine: TransferStateMachine
        package var pages: PendingJobPages
        package var jobs = Jobs()
        package let running = RunningTransfers()
        /// Small uploads written under their temporary names and small downloads in their
        /// partial files, waiting for the next placement (`TransferEngine+Placement.swift`).
        package var waiting = PlacementBatch()
        /// The uploads of the last batch placed, named but with their names not yet
        /// flushed: the next batch's flush covers them, and they are booked after it.
        package var unflushed: PlacementBatch.Unflushed?
        /// When the one timer under way goes off.
        private var timerAt: Double?
        /// Why the last probe failed, for the offline report.
        private var lastProbeFailure: BackendError?

        package init(engine: TransferEngine, pages: PendingJobPages) {
            self.engine = engine
            self.pages = pages
            // Remote deletes go to the backend as many to a request as it takes (S3: 1,000).
            // Small uploads to a local disk and small downloads from one start in batches too:
            // each file's own trips to a blocking thread and back cost more than copying it (a
            // third of a first push of 20,000 photos, a fifth of their pull).
            let batchesTransfers = engine.executor.stagesUploads || engine.executor.fetchesDirectly
            machine = TransferStateMachine(
                queueCaps: engine.queueCaps, globalCap: engine.globalCap, retry: engine.retry,
                batchWindow: TransferEngine.batchWindow, batchLimit: TransferEngine.batchLimit,
                jobBatchSize: max(engine.executor.pair.backend.capabilities.maxDeleteBatch,
                                  batchesTransfers ? TransferEngine.transferBatchSize : 1),
                smallBatchSize: TransferEngine.sentTogether,
                placementLimit: TransferEngine.placementLimit)
        }

        private func now() -> Double { engine.clock.now() }

        /// Runs until the machine says the run is over: reads the journal's pages while the
        /// machine takes jobs, waits for the next event and hands it on.
        mutating func drive(_ group: inout TaskGroup<Event>, summary: inout RunSummary) async throws(JournalError) {
            if let feed = engine.feed {
                group.addTask { .fed(await feed.next()) }
            }
            while true {
                try await noticeStop(&group, summary: &summary)
                try await readPages(&group, summary: &summary)
                if machine.isFinished { return }
                // One timer at a time, for the earliest moment the machine asked for.
                if let wake = machine.nextWake, timerAt.map({ wake < $0 - 0.001 }) ?? true {
                    timerAt = wake
                    let clock = engine.clock
                    group.addTask {
                        await clock.sleep(until: wake)
                        return .timer
                    }
                }
                guard let event = await group.next() else { return }
                // A cancelled transfer ends with an error: the machine must know the run is
                // stopping before it hears of it, or it books a failure.
                try await noticeStop(&group, summary: &summary)
                try await handle(event, &group, summary: &summary)
            }
        }

        private mutating func noticeStop(_ group: inout TaskGroup<Event>, summary: inout RunSummary) async throws(JournalError) {
            guard Task.isCancelled, !machine.isStopping else { return }
            try await perform(machine.handle(.stopRequested, now: now()), &group, summary: &summary)
        }

        /// Jobs still in the journal, read while the machine takes them. After it gave up on
        /// an offline backend it hands each back at once, so then the pages are read to the end.
        private mutating func readPages(_ group: inout TaskGroup<Event>, summary: inout RunSummary) async throws(JournalError) {
            while machine.acceptsJobs, !pages.isExhausted {
                let machine = self.machine
                let loaded = try await pages.refill(waiting: { machine.readyCount(rank: $0) })
                try await arrive(loaded, outsidePages: false, &group, summary: &summary)
                if !self.machine.isAbandoning { break }
            }
            if pages.isExhausted && !machine.hasAllJobs {
                try await perform(machine.handle(.allJobsQueued, now: now()), &group, summary: &summary)
            }
        }

        private mutating func arrive(_ records: [FileRecord], outsidePages: Bool, _ group: inout TaskGroup<Event>,
                                     summary: inout RunSummary) async throws(JournalError) {
            let arrived = take(records, outsidePages: outsidePages)
            guard !arrived.isEmpty else { return }
            try await perform(machine.handle(.jobsArrived(arrived), now: now()), &group, summary: &summary)
        }

        private mutating func take(_ records: [FileRecord], outsidePages: Bool) -> [SchedulerState.Job] {
            let executor = engine.executor
            let batchesDeletes = executor.pair.backend.capabilities.maxDeleteBatch > 1
            return jobs.take(records, outsidePages: outsidePages, classifier: engine.classifier, progress: engine.progress,
                             batches: { executor.joinsBatch($0, deletesInBatches: batchesDeletes) },
                             sendsTogether: { executor.sendsTogether($0) })
        }

        private mutating func handle(_ event: Event, _ group: inout TaskGroup<Event>,
                                     summary: inout RunSummary) async throws(JournalError) {
            switch event {
            case .timer:
                if let at = timerAt, at <= now() + 0.001 { timerAt = nil }
                try await perform(machine.handle(.timerFired, now: now()), &group, summary: &summary)
            case let .fed(records):
                let feed = engine.feed
                if !Task.isCancelled {
                    let arrived = take(records, outsidePages: true)
                    feed?.accepted(records)
                    try await perform(machine.handle(.jobsArrived(arrived), now: now()), &group, summary: &summary)
                }
                if let feed, !records.isEmpty, !Task.isCancelled {
                    group.addTask { .fed(await feed.next()) }
                }
            case let .finished(job, record, outcome, moved):
                try await settle(job, record, outcome, moved: moved, &group, summary: &summary)
            case let .finishedBatch(members):
                // Each file of the batch is its own job to the machine: booked, retried or
                // failed on its own.
                for member in members {
                    try await settle(member.job, member.record, member.outcome, moved: member.moved, &group, summary: &summary)
                }
            case let .committed(failure):
                if let failure { throw failure }
                try await perform(machine.handle(.commitFinished, now: now()), &group, summary: &summary)
            case let .placed(placed):
                unflushed = placed.unflushed
                let followUps = await engine.book(placed.outcome, summary: &summary)
                try await perform(machine.handle(.placementFinished(leftUnflushed: placed.unflushed != nil), now: now()),
                                  &group, summary: &summary)
                try await arrive(followUps, outsidePages: true, &group, summary: &summary)
            case let .probed(failure):
                lastProbeFailure = failure
                try await perform(machine.handle(.probeAnswered(reachable: failure == nil), now: now()),
                                  &group, summary: &summary)
            }
        }

        /// Hands an attempt's outcome to the machine (a failed one with its error kept for
        /// the booking) and carries out what it decides.
        private mutating func settle(_ job: SchedulerState.Job, _ record: FileRecord, _ outcome: Outcome, moved: Int64,
                                     _ group: inout TaskGroup<Event>, summary: inout RunSummary) async throws(JournalError) {
            let progress = engine.progress
            switch outcome {
            case let .success(success):
                jobs.successes[job.path] = success
                let event: TransferStateMachine.Event = switch success {
                case .staged, .fetched: .jobStaged(job)
                default: .jobSucceeded(job)
                }
                try await perform(machine.handle(event, now: now()), &group, summary: &summary)
            case let .failure(.journal(error)):
                progress.ended(queue: record.queue, succeeded: false)
                throw error
            case let .failure(.backend(error)):
                progress.ended(queue: record.queue, succeeded: false, final: false)
                progress.rewind(queue: record.queue, bytes: moved)
                jobs.errors[job.path] = error
                let failure = TransferStateMachine.Failure(error)
                try await perform(machine.handle(.jobFailed(job, failures: record.attempts + 1, failure), now: now()),
                                  &group, summary: &summary)
            }
        }

        /// Carries out the machine's actions, in order; a rename's follow-up transfers then
        /// join this same run.
        private mutating func perform(_ actions: [TransferStateMachine.Action], _ group: inout TaskGroup<Event>,
                                      summary: inout RunSummary) async throws(JournalError) {
            var followUps: [FileRecord] = []
            for action in actions {
                followUps += await perform(action, &group, summary: &summary)
            }
            // Their rows are pending in the journal too: the page reader must not hand them
            // out again.
            try await arrive(followUps, outsidePages: true, &group, summary: &summary)
        }

        private mutating func perform(_ action: TransferStateMachine.Action, _ group: inout TaskGroup<Event>,
                                      summary: inout RunSummary) async -> [FileRecord] {
            let engine = self.engine
            switch action {
            case let .start(job):
                start(job, &group)
            case let .startBatch(batch):
                start(batch, &group)
            case let .recordSuccess(job):
                guard let record = jobs.records.removeValue(forKey: job.path),
                      let success = jobs.successes.removeValue(forKey: job.path) else { break }
                jobs.errors[job.path] = nil
                if case let .staged(updated, upload) = success {
                    waiting.uploads.append((record, updated, upload))
                } else if case let .fetched(download) = success {
                    waiting.downloads.append((record, download))
                } else {
                    return await engine.bookSuccess(record, success, summary: &summary)
                }
            case let .recordRetry(job, failures, delay):
                await bookRetry(job, failures: failures, notBefore: engine.wallClock() + delay)
            case let .setAside(job, failures, pass):
                // Due at once for a later run: this run's next pass is the machine's.
                await bookRetry(job, failures: failures, notBefore: engine.wallClock(),
                                note: "tried again after the other files (pass \(pass) of \(engine.retry.passes))")
            case let .recordFailure(job, failures):
                guard let record = jobs.records.removeValue(forKey: job.path) else { break }
                let error = jobs.errors.removeValue(forKey: job.path).map(\.description) ?? "failed"
                await engine.failForGood(record, failures: failures, message: error, summary: &summary)
            case let .handBack(job):
                guard let record = jobs.records.removeValue(forKey: job.path) else { break }
                jobs.errors[job.path] = nil
                let message = "the remote \(engine.executor.pair.remoteLocation) did not answer for "
                    + "\(Int(machine.gaveUpAfter ?? 0)) s; the file stays queued: run again when the server is back"
                await engine.handBack(record, message: message, summary: &summary)
            case let .dropStopped(job):
                jobs.records[job.path] = nil
                jobs.errors[job.path] = nil
            case let .park(job):
                // The attempt may have got through before the connection failed: the next
                // one looks at the target first.
                jobs.records[job.path]?.parkAfterLostConnection(error: jobs.errors[job.path]?.description)
            case .probe:
                let backend = engine.executor.pair.backend
                group.addTask {
                    do throws(BackendError) {
                        try await backend.checkReachable()
                        return .probed(nil)
                    } catch {
                        return .probed(error.suggestsOutage ? error : nil)
                    }
                }
            case .commit:
                // Commits go on beside the jobs: waiting for the journal's transaction held
                // every job's start back for it.
                let writer = engine.writer
                group.addTask {
                    do throws(JournalError) {
                        try await writer.commit()
                        return .committed(nil)
                    } catch {
                        return .committed(error)
                    }
                }
            case .place:
                let batch = waiting
                let earlier = unflushed
                waiting = PlacementBatch()
                unflushed = nil
                group.addTask { .placed(await engine.place(batch, after: earlier)) }
            case let .reportOffline(nextProbeIn):
                engine.sink.emit(.remoteOffline(remote: engine.executor.pair.remoteLocation,
                                                message: lastProbeFailure?.description ?? "no answer",
                                                nextProbeSeconds: nextProbeIn))
            case let .reportOnline(offlineSeconds):
                engine.sink.emit(.remoteOnline(remote: engine.executor.pair.remoteLocation, offlineSeconds: offlineSeconds))
            }
            return []
        }

        /// Starts one attempt of a job as a child task; its end comes back as `finished`.
        private func start(_ job: SchedulerState.Job, _ group: inout TaskGroup<Event>) {
            let engine = self.engine, running = self.running
            guard let record = jobs.records[job.path] else { return }
            engine.progress.began(queue: record.queue, path: record.path)
            let observer = engine.observer(for: record)
            running.add(observer)
            group.addTask {
                defer {
                    running.remove(observer)
                    engine.progress.left(queue: record.queue, path: record.path)
                }
                let outcome = await engine.executor.attempt(record, observer: observer)
                return .finished(job, record, outcome, observer.bytesMoved)
            }
        }

        /// Starts one attempt of several jobs together (remote deletes in one request, small
        /// local transfers in one trip); each one's outcome comes back in `finishedBatch`.
        private func start(_ batch: [SchedulerState.Job], _ group: inout TaskGroup<Event>) {
            let engine = self.engine, running = self.running
            let members = batch.compactMap { job in
                jobs.records[job.path].map { (job: job, record: $0, observer: engine.observer(for: $0)) }
            }
            for member in members {
                engine.progress.began(queue: member.record.queue, path: member.record.path)
                running.add(member.observer)
            }
            group.addTask {
                defer {
                    for member in members {
                        running.remove(member.observer)
                        engine.progress.left(queue: member.record.queue, path: member.record.path)
                    }
                }
                let outcomes = await engine.executor.attempt(batch: members.map { ($0.record, $0.observer) })
                return .finishedBatch(members.map { member in
                    (member.job, member.record, outcomes[member.record.path]
                        ?? .failure(.backend(BackendError(.io, "the batch gave no outcome", path: member.record.path))),
                     member.observer.bytesMoved)
                })
            }
        }

        /// Books a failed attempt that is tried again, and reports it.
        private mutating func bookRetry(_ job: SchedulerState.Job, failures: Int, notBefore: Double,
                                        note: String? = nil) async {
            guard let record = jobs.records[job.path] else { return }
            jobs.records[job.path] = await engine.bookFailedAttempt(
                record, failures: failures, error: jobs.errors[job.path].map(\.description) ?? "failed",
                notBefore: notBefore, note: note)
        }
    }

    /// What the shell keeps per job between an event and the machine's actions.
    struct Jobs {
        /// The jobs loaded and not yet over, by path.
        package var records: [String: FileRecord] = [:]
        /// Jobs that reached the engine other than through the pages (follow-ups of conflict
        /// renames, files fed in by the watcher while the run goes on): the page reader may
        /// meet their rows later and must not start them twice.
        var takenOutsidePages: Set<String> = []
        /// Successful attempts, until the machine says to book them.
        var successes: [String: TransferExecutor.Success] = [:]
        /// The error of each job whose last attempt failed.
        package var errors: [String: BackendError] = [:]
        /// Records loaded or fed in, as the machine's jobs; records already known are left out.
        /// Those `batches` accepts are marked batchable.
        package mutating func take(_ loaded: [FileRecord], outsidePages: Bool, classifier: QueueClassifier,
                           progress: RunProgress, batches: (FileRecord) -> Bool,
                           sendsTogether: (FileRecord) -> Bool) -> [SchedulerState.Job] {
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
                                                small: record.transferBytes < TransferExecutor.resumableSize,
                                                sendsWithOthers: sendsTogether(record)))
            }
            return taken
        }
    }
}
