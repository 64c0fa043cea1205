import Testing

@testable import FerryCore

/// The job of the retry table.
private let jobA = TransferStateMachine.Job(path: "a", rank: 1)

/// The engine's decisions, event by event, with time passed in: retries and outages of
/// minutes run in microseconds, and nothing here waits or touches a disk or a server.
@Suite("TransferStateMachine")
struct TransferStateMachineTests {
    typealias Machine = TransferStateMachine
    typealias Job = Machine.Job

    static func job(_ path: String, rank: Int = 1) -> Job { Job(path: path, rank: rank) }

    /// 3 attempts, 1 s base, doubling to at most 4 s; an offline backend is waited for 10 s.
    static func machine(caps: [Int] = [2, 2, 2, 2], global: Int = 2, attempts: Int = 3,
                        offlineWait: Double? = 10, batchLimit: Int = 100) -> Machine {
        var retry = RetryPolicy(attempts: attempts, baseDelay: .seconds(1), factor: 2, maxDelay: .seconds(4))
        retry.offlineWait = offlineWait.map { .milliseconds(Int64($0 * 1000)) }
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
}
