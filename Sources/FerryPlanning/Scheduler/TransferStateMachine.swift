/// Every decision of a run's engine, as a pure state machine: which job starts next, what
/// a failure means (retry later, set aside for a later pass, fail for good, or a sign that
/// the backend is gone), when to probe an offline backend and when to stop waiting for it,
/// when the results waiting in memory must be committed, when the small transfers waiting
/// to be put in place go, and when the run is over.
///
/// It takes events (jobs arrived, a job succeeded or failed, a probe answered, a timer
/// fired, a commit or a placement ended, the run was asked to stop) with the time they
/// happened, and returns actions for the engine to carry out (start a job, book a result,
/// probe, commit, place). Time comes in as
/// seconds on a monotonic clock and nothing here waits, so tests drive hours of retries
/// and outages in microseconds. `TransferEngine` is the thin shell that performs the
/// actions and feeds the outcomes back.
public struct TransferStateMachine: Sendable {
    public typealias Job = SchedulerState.Job

    /// How a failed attempt failed, as far as the decisions care.
    public enum Failure: Sendable, Equatable {
        /// A failure that may mean the backend is gone (connection refused, timeout, 503 …).
        case outage
        /// Worth another attempt later; a server's Retry-After hint in seconds, if any.
        case retryable(retryAfter: Double?)
        /// Not worth another attempt (403, an invalid name, a full disk …).
        case permanent
    }

    public enum Event: Sendable, Equatable {
        /// Jobs to run, from the journal's pages, a rename's follow-ups or the watcher.
        case jobsArrived([Job])
        /// A started job is over and its result is to be booked.
        case jobSucceeded(Job)
        /// A started job is over with a small transfer that waits, under a temporary name,
        /// to be put in place with others (`place`); booked once in place.
        case jobStaged(Job)
        /// A started job failed; `failures` counts this failure too.
        case jobFailed(Job, failures: Int, Failure)
        /// The backend answered a probe, or did not.
        case probeAnswered(reachable: Bool)
        /// The timer the machine asked for went off.
        case timerFired
        /// The run is cancelled: no new job starts, running ones are awaited.
        case stopRequested
        /// Every job queued for the run has arrived (the journal's pages are read to the
        /// end): once the others are over, the jobs set aside go again. Jobs fed in later
        /// (a watched folder) join whatever pass is under way.
        case allJobsQueued
        /// A commit the machine asked for is over.
        case commitFinished
        /// A placement is over and what it placed is booked; `leftUnflushed`: names it made
        /// wait for the next placement's flush.
        case placementFinished(leftUnflushed: Bool)
    }

    public enum Action: Sendable, Equatable {
        /// Start an attempt of this job.
        case start(Job)
        /// Start one attempt of all these jobs together, in one slot (remote deletes sent
        /// to the backend as one request); each job's outcome comes back as its own event.
        case startBatch([Job])
        /// Book a success.
        case recordSuccess(Job)
        /// Book a failure that will be tried again `delay` seconds from now.
        case recordRetry(Job, failures: Int, delay: Double)
        /// Book a failure whose attempts ran out on transient errors: the job goes again in
        /// pass `pass`, with all its attempts, once every other job is over.
        case setAside(Job, failures: Int, pass: Int)
        /// Book a failure for good.
        case recordFailure(Job, failures: Int)
        /// Leave the job queued for a later run (the backend was offline for too long);
        /// its attempts are not used up.
        case handBack(Job)
        /// The attempt was stopped by cancellation: nothing is booked, its row stays as
        /// the attempt left it (a resumable point).
        case dropStopped(Job)
        /// The job failed in a way that suggests an outage and waits for the probe's verdict.
        case park(Job)
        /// Ask the backend whether it answers.
        case probe
        /// Commit the results booked so far.
        case commit
        /// Put the staged transfers waiting, and the names the last placement left, in place
        /// (one placement at a time, beside the jobs).
        case place
        /// The backend stopped answering; the next probe goes out `nextProbeIn` seconds from now.
        case reportOffline(nextProbeIn: Double)
        /// The backend answers again after `offlineSeconds`.
        case reportOnline(offlineSeconds: Double)
    }

    /// Why the run stopped waiting for an offline backend, for the handed-back jobs' message.
    public private(set) var gaveUpAfter: Double?

    private var scheduler: SchedulerState
    private var outage: OutageTracker<Job>
    private let retry: RetryPolicy
    private let batchWindow: Double
    private let batchLimit: Int

    private var probing = false
    /// Failures of the parked jobs, counted if the probe says it was not an outage.
    private var parkedFailures: [Job: Int] = [:]
    private var probeDueAt: Double?
    private var stopping = false
    /// Results booked and not yet committed, and when the oldest of them was booked.
    private var uncommitted = 0
    private var oldestUncommittedAt: Double?
    private var commitsRunning = 0

    /// Staged transfers waiting for a placement, and whether the last one left names that
    /// its successor's flush must cover.
    private var waitingPlacement = 0
    private var namesUnflushed = false
    private var placing = false
    /// A commit came while a placement ran: the next placement starts as soon as it ends.
    private var placementWanted = false
    /// Past this many staged transfers waiting while a placement runs, no job starts until
    /// it ends: what waits stays bounded however slow the disk's flush.
    private let placementLimit: Int

    /// The pass under way: 1 is the main one, each later one takes the jobs set aside.
    private var pass = 1
    private var allJobsQueued = false
    /// Jobs whose attempts ran out on transient failures, in the order they were set
    /// aside, with their failures then.
    private var setAside: [(job: Job, failures: Int)] = []
    /// The failures a job had when its pass began: a pass gives it all its attempts again.
    private var failuresBeforePass: [Job: Int] = [:]

    /// `batchWindow` and `batchLimit` bound the results waiting to be committed;
    /// `jobBatchSize` is the most batchable jobs that start together (the backend's
    /// largest delete request); `smallBatchSize` the most small files sent one after the
    /// other in one slot; `placementLimit` the most staged transfers that wait while a
    /// placement runs.
    public init(queueCaps: [Int], globalCap: Int, retry: RetryPolicy, batchWindow: Double, batchLimit: Int,
                jobBatchSize: Int = 1, smallBatchSize: Int = 1, placementLimit: Int = 256) {
        self.placementLimit = max(1, placementLimit)
        scheduler = SchedulerState(queueCaps: queueCaps, globalCap: globalCap, jobBatchSize: jobBatchSize,
                                   smallBatchSize: smallBatchSize)
        self.retry = retry
        outage = OutageTracker(probeDelay: { retry.delay(afterFailures: $0).inSeconds },
                               giveUpAfter: retry.offlineWait?.inSeconds)
        self.batchWindow = batchWindow
        self.batchLimit = max(1, batchLimit)
    }

    // MARK: What the shell asks

    /// The run has given up on an offline backend: jobs that arrive now are handed back
    /// at once, and what still fails for want of the backend too.
    public var isAbandoning: Bool { gaveUpAfter != nil }

    /// More jobs are welcome: new ones can start, or are handed back at once.
    public var acceptsJobs: Bool { !stopping && (outage.isDispatching || isAbandoning) }

    /// Jobs of one queue rank waiting to start, for the page reader's low-water mark.
    public func readyCount(rank: Int) -> Int { scheduler.readyCount(rank: rank) }

    public var runningCount: Int { scheduler.runningCount }

    /// The run was asked to stop (`stopRequested`).
    public var isStopping: Bool { stopping }

    /// Every job queued for the run has arrived (`allJobsQueued`).
    public var hasAllJobs: Bool { allJobsQueued }

    /// The run is over: it is idle, no commit or placement runs, and either it is stopping
    /// or every job arrived and no staged transfer waits. What a stopped run leaves staged,
    /// and the names the last placement left, the shell places after the loop.
    public var isFinished: Bool {
        guard isIdle, commitsRunning == 0, !placing else { return false }
        return stopping || (allJobsQueued && waitingPlacement == 0)
    }

    /// Starts wait for the placement under way: too many staged transfers wait.
    private var placementIsFull: Bool { placing && waitingPlacement >= placementLimit }

    /// Nothing runs, waits, is set aside for a later pass, is parked or probed: the run
    /// is over unless more jobs are coming.
    public var isIdle: Bool {
        if stopping { return scheduler.runningCount == 0 }
        return scheduler.isIdle && setAside.isEmpty && outage.isSettled && !probing && probeDueAt == nil
    }

    /// The pass under way (1: the main one).
    public var currentPass: Int { pass }

    /// When the machine wants a `timerFired`: the earliest of a delayed retry becoming
    /// ready, a probe falling due, and the booked results' commit deadline. Nil while
    /// stopping: then only the running jobs' ends matter.
    public var nextWake: Double? {
        guard !stopping else { return nil }
        var wake: Double?
        func consider(_ time: Double?) {
            guard let time else { return }
            wake = min(wake ?? time, time)
        }
        if (outage.isDispatching || isAbandoning) && !placementIsFull { consider(scheduler.nextReadyTime) }
        consider(probeDueAt)
        consider(oldestUncommittedAt.map { $0 + batchWindow })
        return wake
    }

    // MARK: Events

    public mutating func handle(_ event: Event, now: Double) -> [Action] {
        var actions: [Action] = []
        switch event {
        case let .jobsArrived(jobs):
            for job in jobs {
                if isAbandoning {
                    book(.handBack(job), now: now, into: &actions)
                } else {
                    scheduler.add(job)
                }
            }
        case let .jobSucceeded(job):
            scheduler.finish(job)
            failuresBeforePass[job] = nil
            book(.recordSuccess(job), now: now, into: &actions)
        case let .jobStaged(job):
            scheduler.finish(job)
            failuresBeforePass[job] = nil
            waitingPlacement += 1
            book(.recordSuccess(job), now: now, into: &actions)
        case let .jobFailed(job, failures, failure):
            scheduler.finish(job)
            failed(job, failures: failures, failure, now: now, into: &actions)
        case let .probeAnswered(reachable):
            probing = false
            if !stopping { probeAnswered(reachable: reachable, now: now, into: &actions) }
        case .timerFired:
            if let due = probeDueAt, due <= now, !stopping {
                probeDueAt = nil
                probing = true
                actions.append(.probe)
            }
        case .stopRequested:
            stopping = true
            probeDueAt = nil
        case .allJobsQueued:
            allJobsQueued = true
        case .commitFinished:
            commitsRunning = max(0, commitsRunning - 1)
        case let .placementFinished(leftUnflushed):
            placing = false
            namesUnflushed = leftUnflushed
            // The names just made wait for the next placement's flush, which the next commit
            // brings; with nothing waiting none may come, so they are flushed on their own.
            if placementWanted || waitingPlacement == 0 {
                placementWanted = false
                requestPlacement(into: &actions)
            }
            // What the placement booked is committed at once.
            commitsRunning += 1
            actions.append(.commit)
        }
        if !stopping && outage.isDispatching && allJobsQueued && scheduler.isIdle && !setAside.isEmpty {
            beginNextPass(now: now)
        }
        if !stopping && outage.isDispatching && !placementIsFull {
            actions += scheduler.startSlots(now: now).map { slot in
                switch slot {
                case let .single(job): .start(job)
                case let .batch(jobs): .startBatch(jobs)
                }
            }
        }
        // The same sum as `nextWake`'s deadline, so a timer set for it always finds it due.
        if let oldest = oldestUncommittedAt, uncommitted >= batchLimit || now >= oldest + batchWindow {
            commit(into: &actions)
        }
        // The last staged transfers are placed while the run still takes jobs: one whose
        // name another device took first is decided again, and its job runs in this run.
        if !stopping && allJobsQueued && isIdle && commitsRunning == 0 && !placing && waitingPlacement > 0 {
            requestPlacement(into: &actions)
        }
        return actions
    }

    // MARK: Decisions

    private mutating func failed(_ job: Job, failures: Int, _ failure: Failure, now: Double, into actions: inout [Action]) {
        if stopping {
            // Stopped, not failed: the cancelled transfer ended with an error.
            actions.append(.dropStopped(job))
            return
        }
        switch failure {
        case .outage where isAbandoning:
            book(.handBack(job), now: now, into: &actions)
        case .outage:
            actions.append(.park(job))
            parkedFailures[job] = failures
            if outage.jobFailedSuspiciously(job) {
                // Results so far are made durable before what may be a long wait.
                if uncommitted > 0 { commit(into: &actions) }
                uncommitted = 0
                oldestUncommittedAt = nil
                probing = true
                actions.append(.probe)
            }
        case let .retryable(retryAfter):
            retryOrFail(job, failures: failures, retryAfter: retryAfter, now: now, into: &actions)
        case .permanent:
            failuresBeforePass[job] = nil
            book(.recordFailure(job, failures: failures), now: now, into: &actions)
        }
    }

    /// After a transient failure: another attempt later in this pass while the pass leaves
    /// the job some, else set aside for the next pass while the policy allows one more,
    /// else a failure for good.
    private mutating func retryOrFail(_ job: Job, failures: Int, retryAfter: Double?, now: Double,
                                      into actions: inout [Action]) {
        let failuresInPass = failures - failuresBeforePass[job, default: 0]
        guard retry.allowsAnotherAttempt(afterFailures: failuresInPass) else {
            if pass < retry.passes && !isAbandoning {
                setAside.append((job, failures))
                book(.setAside(job, failures: failures, pass: pass + 1), now: now, into: &actions)
            } else {
                failuresBeforePass[job] = nil
                book(.recordFailure(job, failures: failures), now: now, into: &actions)
            }
            return
        }
        let delay = retry.delay(afterFailures: failuresInPass,
                                retryAfter: retryAfter.map { .milliseconds(Int64($0 * 1000)) }).inSeconds
        scheduler.add(job, readyAt: now + delay)
        book(.recordRetry(job, failures: failures, delay: delay), now: now, into: &actions)
    }

    private mutating func probeAnswered(reachable: Bool, now: Double, into actions: inout [Action]) {
        switch outage.probeAnswered(reachable: reachable, now: now) {
        case let .falseAlarm(parked):
            // The backend answers: each parked job failed on its own, and its attempt counts.
            for job in parked {
                retryOrFail(job, failures: parkedFailures[job, default: 1], retryAfter: nil, now: now, into: &actions)
            }
            parkedFailures = [:]
        case let .wentOffline(next):
            probeDueAt = next
            actions.append(.reportOffline(nextProbeIn: next - now))
        case let .stillOffline(next):
            probeDueAt = next
        case let .backOnline(parked, seconds):
            actions.append(.reportOnline(offlineSeconds: seconds))
            // The outage is not held against them: they start again as they were.
            for job in parked { scheduler.add(job) }
            parkedFailures = [:]
        case let .gaveUp(parked, seconds):
            gaveUpAfter = seconds
            let waiting = setAside.map(\.job)
            setAside = []
            for job in parked + scheduler.drainWaiting() + waiting {
                book(.handBack(job), now: now, into: &actions)
            }
            parkedFailures = [:]
        }
    }

    /// The main pass (or the last one) is over: the jobs set aside start again, each with
    /// all its attempts, after the backoff of the pass.
    private mutating func beginNextPass(now: Double) {
        pass += 1
        let delay = retry.delay(beforePass: pass).inSeconds
        for (job, failures) in setAside {
            failuresBeforePass[job] = failures
            scheduler.add(job, readyAt: now + delay)
        }
        setAside = []
    }

    /// Commits what is booked, and places the staged transfers beside it.
    private mutating func commit(into actions: inout [Action]) {
        actions.append(.commit)
        commitsRunning += 1
        uncommitted = 0
        oldestUncommittedAt = nil
        requestPlacement(into: &actions)
    }

    /// Places what waits, or has the next placement start as soon as the one under way ends.
    private mutating func requestPlacement(into actions: inout [Action]) {
        guard waitingPlacement > 0 || namesUnflushed else { return }
        guard !placing else {
            placementWanted = true
            return
        }
        placing = true
        waitingPlacement = 0
        namesUnflushed = false
        actions.append(.place)
    }

    /// Books a result: it waits in memory with the others until the batch is due.
    private mutating func book(_ action: Action, now: Double, into actions: inout [Action]) {
        actions.append(action)
        uncommitted += 1
        if oldestUncommittedAt == nil { oldestUncommittedAt = now }
    }
}
