import Testing

@testable import FerryCore
@testable import FerryPlanning

/// The job of the retry table.
private let jobA = TransferStateMachine.Job(path: "a", rank: 1)

/// The engine's decisions, event by event, with time passed in: retries and outages of
/// minutes run in microseconds, and nothing here waits or touches a disk or a server.
@Suite("TransferStateMachine")
struct TransferStateMachineTests {
    typealias Machine = TransferStateMachine
    typealias Job = Machine.Job

    static func job(_ path: String, rank: Int = 1) -> Job { Job(path: path, rank: rank) }

    /// 3 attempts, 1 s base, doubling to at most 4 s; an offline backend is waited for 10 s;
    /// one pass unless asked for more.
    static func machine(caps: [Int] = [2, 2, 2, 2], global: Int = 2, attempts: Int = 3,
                        offlineWait: Double? = 10, batchLimit: Int = 100, passes: Int = 1) -> Machine {
        var retry = RetryPolicy(attempts: attempts, baseDelay: .seconds(1), factor: 2, maxDelay: .seconds(4))
        retry.offlineWait = offlineWait.map { .milliseconds(Int64($0 * 1000)) }
        retry.passes = passes
        return Machine(queueCaps: caps, globalCap: global, retry: retry, batchWindow: 0.25, batchLimit: batchLimit)
    }

    static func started(_ actions: [Machine.Action]) -> [String] {
        actions.compactMap { if case let .start(job) = $0 { job.path } else { nil } }
    }

    // MARK: Scheduling

    @Test("jobs start in priority order up to the global cap; a finished job makes room for the next")
    func priorityAndCaps() {
        var machine = Self.machine()
        let actions = machine.handle(.jobsArrived([Self.job("gpx", rank: 2), Self.job("media", rank: 1),
                                                   Self.job("thumb", rank: 0), Self.job("media2", rank: 1)]), now: 0)
        #expect(Self.started(actions) == ["thumb", "media"])
        let next = machine.handle(.jobSucceeded(Self.job("thumb", rank: 0)), now: 1)
        #expect(next.first == .recordSuccess(Self.job("thumb", rank: 0)))
        #expect(Self.started(next) == ["media2"])
        #expect(!machine.isIdle)
    }

    @Test("a run is idle once every job is over and nothing is parked or probed")
    func idle() {
        var machine = Self.machine()
        #expect(machine.isIdle)
        _ = machine.handle(.jobsArrived([Self.job("a")]), now: 0)
        #expect(!machine.isIdle)
        _ = machine.handle(.jobSucceeded(Self.job("a")), now: 0.1)
        #expect(machine.isIdle)
    }

    // MARK: Retries

    @Test("retry rules as a table: failure kind and attempts so far give the action and the delay", arguments: [
        // (failure, failures so far, expected)
        (TransferStateMachine.Failure.retryable(retryAfter: nil), 1,
         TransferStateMachine.Action.recordRetry(jobA, failures: 1, delay: 1)),
        (.retryable(retryAfter: nil), 2, .recordRetry(jobA, failures: 2, delay: 2)),
        (.retryable(retryAfter: nil), 3, .recordFailure(jobA, failures: 3)),
        (.retryable(retryAfter: 3.5), 1, .recordRetry(jobA, failures: 1, delay: 3.5)),
        (.retryable(retryAfter: 60), 1, .recordRetry(jobA, failures: 1, delay: 4)),
        (.permanent, 1, .recordFailure(jobA, failures: 1)),
    ])
    func retryTable(_ failure: Machine.Failure, _ failures: Int, _ expected: Machine.Action) {
        var machine = Self.machine()
        _ = machine.handle(.jobsArrived([Self.job("a")]), now: 0)
        let actions = machine.handle(.jobFailed(Self.job("a"), failures: failures, failure), now: 5)
        #expect(actions.first == expected)
    }

    @Test("a retried job waits for its delay: the timer asked for is its ready time, and it starts then")
    func retryWaitsForItsTime() {
        var machine = Self.machine()
        _ = machine.handle(.jobsArrived([Self.job("a")]), now: 0)
        _ = machine.handle(.jobFailed(Self.job("a"), failures: 1, .retryable(retryAfter: nil)), now: 10)
        // The results' commit deadline comes first, then the retry.
        #expect(machine.nextWake == 10.25)
        #expect(machine.handle(.timerFired, now: 10.25) == [.commit])
        #expect(machine.nextWake == 11)
        #expect(Self.started(machine.handle(.timerFired, now: 10.5)).isEmpty)
        #expect(Self.started(machine.handle(.timerFired, now: 11)) == ["a"])
    }

    // MARK: Passes

    static func setAside(_ actions: [Machine.Action]) -> [String] {
        actions.compactMap { if case let .setAside(job, _, _) = $0 { job.path } else { nil } }
    }

    @Test("a job whose attempts ran out on transient failures is set aside for the next pass, not failed", arguments: [
        (TransferStateMachine.Failure.retryable(retryAfter: nil), 3, 3,
         TransferStateMachine.Action.setAside(jobA, failures: 3, pass: 2)),
        // The last pass: nothing more to set aside for.
        (.retryable(retryAfter: nil), 3, 1, .recordFailure(jobA, failures: 3)),
        // A permanent error fails at once, whatever passes are left.
        (.permanent, 1, 3, .recordFailure(jobA, failures: 1)),
        (.retryable(retryAfter: nil), 2, 3, .recordRetry(jobA, failures: 2, delay: 2)),
    ])
    func setAsideTable(_ failure: Machine.Failure, _ failures: Int, _ passes: Int, _ expected: Machine.Action) {
        var machine = Self.machine(passes: passes)
        _ = machine.handle(.jobsArrived([Self.job("a")]), now: 0)
        #expect(machine.handle(.jobFailed(Self.job("a"), failures: failures, failure), now: 5).first == expected)
    }

    @Test("the next pass begins only once every job has arrived and the others are over, after the pass's backoff")
    func passWaitsForTheOthers() {
        var machine = Self.machine(global: 1, passes: 3)
        _ = machine.handle(.jobsArrived([Self.job("a"), Self.job("b")]), now: 0)
        #expect(Self.setAside(machine.handle(.jobFailed(Self.job("a"), failures: 3, .retryable(retryAfter: nil)), now: 1)) == ["a"])
        #expect(!machine.isIdle)
        // b started when a's slot freed; a waits for it, and for the rest of the pages.
        #expect(Self.started(machine.handle(.jobSucceeded(Self.job("b")), now: 2)).isEmpty)
        #expect(!machine.isIdle)
        #expect(machine.nextWake == nil)
        // All jobs queued: pass 2 begins; the wait goes on from attempt 3's backoff (4 s, the cap).
        #expect(Self.started(machine.handle(.allJobsQueued, now: 3)).isEmpty)
        #expect(machine.currentPass == 2)
        #expect(machine.nextWake == 7)
        #expect(Self.started(machine.handle(.timerFired, now: 7)) == ["a"])
    }

    /// Fires the timers the machine asks for until `path` starts again; the moment it
    /// started, or nil if it never does.
    static func fireTimers(_ machine: inout Machine, until path: String) -> Double? {
        for _ in 0..<20 {
            guard let wake = machine.nextWake else { return nil }
            if started(machine.handle(.timerFired, now: wake)).contains(path) { return wake }
        }
        return nil
    }

    @Test("each pass gives a job all its attempts again, with its backoff from the start; after the last it fails")
    func passGivesFreshAttempts() {
        var machine = Self.machine(passes: 2)
        _ = machine.handle(.allJobsQueued, now: 0)
        _ = machine.handle(.jobsArrived([Self.job("a")]), now: 0)
        var outcomes: [Machine.Action?] = []
        var startedAt: [Double] = []
        var now = 0.0
        for failures in 1...6 {
            now += 0.5
            outcomes.append(machine.handle(.jobFailed(Self.job("a"), failures: failures, .retryable(retryAfter: nil)), now: now).first)
            guard let restarted = Self.fireTimers(&machine, until: "a") else { break }
            startedAt.append(restarted - now)
            now = restarted
        }
        // Pass 1: attempts 1–3, then set aside; pass 2 waits on from attempt 3's backoff
        // (4 s, the cap), then attempts 4–6 with the backoff from 1 s again, and no pass 3.
        #expect(outcomes == [.recordRetry(jobA, failures: 1, delay: 1), .recordRetry(jobA, failures: 2, delay: 2),
                             .setAside(jobA, failures: 3, pass: 2),
                             .recordRetry(jobA, failures: 4, delay: 1), .recordRetry(jobA, failures: 5, delay: 2),
                             .recordFailure(jobA, failures: 6)])
        #expect(startedAt == [1, 2, 4, 1, 2])
        #expect(machine.currentPass == 2)
        #expect(machine.isIdle)
    }

    @Test("a job set aside succeeds in the next pass; a permanent error in a later pass fails it at once")
    func laterPassOutcomes() {
        var machine = Self.machine(attempts: 1, passes: 3)
        _ = machine.handle(.jobsArrived([Self.job("a"), Self.job("b")]), now: 0)
        _ = machine.handle(.allJobsQueued, now: 0)
        _ = machine.handle(.jobFailed(Self.job("a"), failures: 1, .retryable(retryAfter: nil)), now: 1)
        _ = machine.handle(.jobFailed(Self.job("b"), failures: 1, .retryable(retryAfter: nil)), now: 1)
        #expect(machine.currentPass == 2)
        var started: [String] = []
        var now = 1.0
        while started.count < 2, let wake = machine.nextWake {
            now = wake
            started += Self.started(machine.handle(.timerFired, now: now))
        }
        #expect(started == ["a", "b"])
        #expect(machine.handle(.jobSucceeded(Self.job("a")), now: now + 1).first == .recordSuccess(Self.job("a")))
        #expect(machine.handle(.jobFailed(Self.job("b"), failures: 2, .permanent), now: now + 1).first
                == .recordFailure(Self.job("b"), failures: 2))
        #expect(machine.isIdle)
    }

    @Test("a job set aside is handed back, not tried, when the run gives up on an offline backend")
    func setAsideHandedBack() {
        var machine = Self.machine(global: 1, offlineWait: 10, passes: 3)
        _ = machine.handle(.jobsArrived([Self.job("a"), Self.job("b")]), now: 0)
        _ = machine.handle(.jobFailed(Self.job("a"), failures: 3, .retryable(retryAfter: nil)), now: 1)
        _ = machine.handle(.jobFailed(Self.job("b"), failures: 1, .outage), now: 2)
        _ = machine.handle(.probeAnswered(reachable: false), now: 2)
        var now = 2.0
        var handedBack: [String] = []
        while handedBack.isEmpty, now < 100 {
            now = machine.nextWake ?? now + 1
            if machine.handle(.timerFired, now: now).contains(.probe) {
                handedBack = machine.handle(.probeAnswered(reachable: false), now: now)
                    .compactMap { if case let .handBack(job) = $0 { job.path } else { nil } }
            }
        }
        #expect(handedBack == ["b", "a"])
        _ = machine.handle(.allJobsQueued, now: now)
        #expect(machine.isIdle)
    }

    // MARK: Outages

    @Test("a failure that suggests an outage parks the job, commits, probes once, and stops new starts")
    func outageParksAndProbes() {
        var machine = Self.machine(global: 1)
        _ = machine.handle(.jobsArrived([Self.job("a"), Self.job("b")]), now: 0)
        _ = machine.handle(.jobSucceeded(Self.job("a")), now: 0.1)
        let actions = machine.handle(.jobFailed(Self.job("b"), failures: 1, .outage), now: 0.2)
        #expect(actions == [.park(Self.job("b")), .commit, .probe])
        #expect(!machine.acceptsJobs)
        #expect(!machine.isIdle)
    }

    @Test("the probe answers: a false alarm, and the parked job's attempt counts as an ordinary failure")
    func falseAlarm() {
        var machine = Self.machine()
        _ = machine.handle(.jobsArrived([Self.job("a")]), now: 0)
        _ = machine.handle(.jobFailed(Self.job("a"), failures: 1, .outage), now: 1)
        let actions = machine.handle(.probeAnswered(reachable: true), now: 1.1)
        #expect(actions.first == .recordRetry(Self.job("a"), failures: 1, delay: 1))
        #expect(machine.acceptsJobs)
    }

    @Test("offline: probes back off with the retry policy, and the parked jobs restart without losing an attempt")
    func offlineThenBack() {
        var machine = Self.machine(offlineWait: nil)
        _ = machine.handle(.jobsArrived([Self.job("a"), Self.job("b")]), now: 0)
        _ = machine.handle(.jobFailed(Self.job("a"), failures: 1, .outage), now: 1)
        _ = machine.handle(.jobFailed(Self.job("b"), failures: 1, .outage), now: 1)
        #expect(machine.handle(.probeAnswered(reachable: false), now: 2) == [.reportOffline(nextProbeIn: 1)])
        #expect(machine.nextWake == 3)
        #expect(machine.handle(.timerFired, now: 3) == [.probe])
        #expect(machine.handle(.probeAnswered(reachable: false), now: 3.5).isEmpty)
        #expect(machine.nextWake == 5.5)
        #expect(machine.handle(.timerFired, now: 5.5) == [.probe])
        let back = machine.handle(.probeAnswered(reachable: true), now: 6)
        #expect(back.first == .reportOnline(offlineSeconds: 4))
        #expect(Self.started(back) == ["a", "b"])
        #expect(!back.contains { if case .recordRetry = $0 { true } else { false } })
    }

    @Test("offline for longer than the run waits: parked and waiting jobs are handed back, later ones too")
    func givesUp() {
        var machine = Self.machine(global: 1, offlineWait: 10)
        _ = machine.handle(.jobsArrived([Self.job("a"), Self.job("b")]), now: 0)
        _ = machine.handle(.jobFailed(Self.job("a"), failures: 1, .outage), now: 1)
        _ = machine.handle(.probeAnswered(reachable: false), now: 1)
        var now = 1.0
        var handedBack: [String] = []
        while handedBack.isEmpty, now < 100 {
            now = machine.nextWake ?? now + 1
            if machine.handle(.timerFired, now: now).contains(.probe) {
                handedBack = machine.handle(.probeAnswered(reachable: false), now: now)
                    .compactMap { if case let .handBack(job) = $0 { job.path } else { nil } }
            }
        }
        #expect(handedBack == ["a", "b"])
        #expect(now >= 11)
        #expect(machine.isAbandoning && machine.gaveUpAfter.map { $0 >= 10 } == true)
        // Jobs read after giving up are handed back without an attempt.
        let late = machine.handle(.jobsArrived([Self.job("c")]), now: now + 1)
        #expect(late.first == .handBack(Self.job("c")))
        #expect(machine.isIdle)
    }

    // MARK: Stopping and batching

    @Test("stop: nothing new starts, a failing running job is dropped, not booked, and the run ends with it")
    func stopping() {
        var machine = Self.machine(global: 2)
        _ = machine.handle(.jobsArrived([Self.job("a"), Self.job("b"), Self.job("c")]), now: 0)
        #expect(machine.handle(.stopRequested, now: 1).isEmpty)
        #expect(machine.nextWake == nil)
        #expect(machine.handle(.jobFailed(Self.job("a"), failures: 1, .retryable(retryAfter: nil)), now: 2) == [.dropStopped(Self.job("a"))])
        #expect(!machine.isIdle)
        let last = machine.handle(.jobSucceeded(Self.job("b")), now: 2)
        #expect(Self.started(last).isEmpty)
        #expect(machine.isIdle)
    }

    @Test("results are committed when the batch is full or its oldest result has waited the window")
    func batching() {
        var machine = Self.machine(caps: [10, 10, 10, 10], global: 10, batchLimit: 3)
        _ = machine.handle(.jobsArrived((0..<5).map { Self.job("f\($0)") }), now: 0)
        #expect(!machine.handle(.jobSucceeded(Self.job("f0")), now: 0.01).contains(.commit))
        #expect(!machine.handle(.jobSucceeded(Self.job("f1")), now: 0.02).contains(.commit))
        #expect(machine.handle(.jobSucceeded(Self.job("f2")), now: 0.03).last == .commit)
        _ = machine.handle(.jobSucceeded(Self.job("f3")), now: 0.1)
        #expect(machine.nextWake == 0.35)
        #expect(machine.handle(.timerFired, now: 0.35) == [.commit])
        #expect(machine.nextWake == nil)
    }

    // MARK: Commits and placements

    @Test("the run is finished only once its commits are over and every staged transfer is placed and booked")
    func finishedWaitsForCommitsAndPlacements() {
        var machine = Self.machine(caps: [10, 10, 10, 10], global: 10, batchLimit: 2)
        _ = machine.handle(.jobsArrived([Self.job("a"), Self.job("b")]), now: 0)
        _ = machine.handle(.allJobsQueued, now: 0)
        #expect(machine.handle(.jobStaged(Self.job("a")), now: 0.01) == [.recordSuccess(Self.job("a"))])
        // The batch is full: commit what is booked, and place the staged transfers beside it.
        #expect(machine.handle(.jobStaged(Self.job("b")), now: 0.02) == [.recordSuccess(Self.job("b")), .commit, .place])
        #expect(machine.isIdle)
        #expect(!machine.isFinished)
        #expect(machine.handle(.commitFinished, now: 0.03).isEmpty)
        #expect(!machine.isFinished, "the placement is still under way")
        // What the placement booked is committed at once; its names were flushed with it.
        #expect(machine.handle(.placementFinished(leftUnflushed: false), now: 0.04) == [.commit])
        #expect(!machine.isFinished)
        #expect(machine.handle(.commitFinished, now: 0.05).isEmpty)
        #expect(machine.isFinished)
    }

    @Test("one placement at a time: a commit meanwhile has the next start as soon as it ends; names left unflushed get their own")
    func onePlacementAtATime() {
        var machine = Self.machine(caps: [10, 10, 10, 10], global: 10, batchLimit: 1)
        _ = machine.handle(.jobsArrived((0..<3).map { Self.job("f\($0)") }), now: 0)
        #expect(machine.handle(.jobStaged(Self.job("f0")), now: 0.01) == [.recordSuccess(Self.job("f0")), .commit, .place])
        // A placement runs: this commit's transfers wait for it.
        #expect(machine.handle(.jobStaged(Self.job("f1")), now: 0.02) == [.recordSuccess(Self.job("f1")), .commit])
        #expect(machine.handle(.placementFinished(leftUnflushed: true), now: 0.03) == [.place, .commit])
        // Nothing waits, but the last names are not yet flushed: a placement of its own.
        #expect(machine.handle(.placementFinished(leftUnflushed: true), now: 0.04) == [.place, .commit])
        #expect(machine.handle(.placementFinished(leftUnflushed: false), now: 0.05) == [.commit])
    }

    @Test("too many staged transfers waiting for a placement hold new starts back until it ends")
    func placementHoldsStartsBack() {
        var retry = RetryPolicy(attempts: 3, baseDelay: .seconds(1), factor: 2, maxDelay: .seconds(4))
        retry.passes = 1
        var machine = Machine(queueCaps: [1, 1, 1, 1], globalCap: 1, retry: retry, batchWindow: 0.25, batchLimit: 1,
                              placementLimit: 1)
        let first = machine.handle(.jobsArrived((0..<3).map { Self.job("f\($0)") }), now: 0)
        #expect(Self.started(first) == ["f0"])
        #expect(Self.started(machine.handle(.jobStaged(Self.job("f0")), now: 0.01)) == ["f1"])
        // f1 waits for placement while f0's placement runs: the limit is reached.
        let held = machine.handle(.jobStaged(Self.job("f1")), now: 0.02)
        #expect(Self.started(held).isEmpty)
        #expect(machine.nextWake == nil, "no timer spins while starts are held")
        let after = machine.handle(.placementFinished(leftUnflushed: false), now: 0.03)
        #expect(Self.started(after) == ["f2"])
    }

    @Test("the last staged transfers are placed once everything else is over, unless the run is stopping")
    func lastPlacement() {
        var machine = Self.machine(caps: [10, 10, 10, 10], global: 10, batchLimit: 100)
        _ = machine.handle(.jobsArrived([Self.job("a")]), now: 0)
        #expect(machine.handle(.jobStaged(Self.job("a")), now: 0.01) == [.recordSuccess(Self.job("a"))])
        #expect(!machine.isFinished, "a job may still arrive")
        #expect(machine.handle(.allJobsQueued, now: 0.02) == [.place])
        var stopped = Self.machine(caps: [10, 10, 10, 10], global: 10, batchLimit: 100)
        _ = stopped.handle(.jobsArrived([Self.job("a")]), now: 0)
        _ = stopped.handle(.allJobsQueued, now: 0)
        _ = stopped.handle(.stopRequested, now: 0.01)
        #expect(stopped.handle(.jobStaged(Self.job("a")), now: 0.02) == [.recordSuccess(Self.job("a"))])
        #expect(stopped.isFinished, "a stopped run places what is left after its jobs")
    }
}
