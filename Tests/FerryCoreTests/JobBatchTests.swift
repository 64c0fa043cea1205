import Testing

@testable import FerryCore
@testable import FerryPlanning

/// Batchable jobs (remote deletes) start together, one slot per batch, and each still ends
/// on its own: the scheduler's and the state machine's side of DeleteObjects in batches.
@Suite("job batches")
struct JobBatchTests {
    typealias Job = SchedulerState.Job

    static func delete(_ path: String, rank: Int = 0) -> Job { Job(path: path, rank: rank, batchable: true) }

    @Test("2,500 ready deletes of one queue start as batches of 1,000, 1,000 and 500, one slot each")
    func batchesOfAQueue() {
        var state = SchedulerState(queueCaps: [4], globalCap: 4, jobBatchSize: 1000)
        for index in 0..<2500 { state.add(Self.delete("f\(index)")) }
        let slots = state.startSlots(now: 0)
        #expect(slots.map(\.jobs.count) == [1000, 1000, 500])
        #expect(slots.allSatisfy { if case .batch = $0 { true } else { false } })
        #expect(slots[0].jobs.first?.path == "f0" && slots[2].jobs.last?.path == "f2499", "arrival order kept")
        #expect(state.runningCount == 3)
        #expect(state.waitingCount == 0)
    }

    @Test("a batch holds its slot until every one of its jobs has finished")
    func slotHeldUntilLastJob() {
        var state = SchedulerState(queueCaps: [1], globalCap: 1, jobBatchSize: 3)
        for index in 0..<4 { state.add(Self.delete("d\(index)")) }
        let first = state.startSlots(now: 0)
        #expect(first.map(\.jobs.count) == [3])
        state.finish(Self.delete("d0"))
        state.finish(Self.delete("d1"))
        #expect(state.startSlots(now: 0).isEmpty, "one job of the batch is still running")
        #expect(state.runningCount == 1)
        state.finish(Self.delete("d2"))
        #expect(state.startSlots(now: 0) == [.batch([Self.delete("d3")])])
    }

    @Test("within a queue, jobs and batches start in arrival order; batches never mix queues")
    func arrivalOrderAndQueues() {
        var state = SchedulerState(queueCaps: [4, 4], globalCap: 8, jobBatchSize: 10)
        state.add(Job(path: "upload-1", rank: 0))
        state.add(Self.delete("del-1"))
        state.add(Job(path: "upload-2", rank: 0))
        state.add(Self.delete("del-2"))
        state.add(Self.delete("low-del", rank: 1))
        #expect(state.startSlots(now: 0) == [
            .single(Job(path: "upload-1", rank: 0)),
            .batch([Self.delete("del-1"), Self.delete("del-2")]),
            .single(Job(path: "upload-2", rank: 0)),
            .batch([Self.delete("low-del", rank: 1)]),
        ])
    }

    @Test("a retried delete joins the next batch once its delay is over, behind the jobs that were ready before it")
    func retryJoinsALaterBatch() {
        var state = SchedulerState(queueCaps: [1], globalCap: 1, jobBatchSize: 10)
        state.add(Self.delete("late"), readyAt: 5)
        state.add(Self.delete("now"))
        #expect(state.startSlots(now: 0) == [.batch([Self.delete("now")])])
        state.finish(Self.delete("now"))
        state.add(Self.delete("also"))
        #expect(state.startSlots(now: 6) == [.batch([Self.delete("also"), Self.delete("late")])])
    }

    @Test("draining for an offline backend gives back batchable jobs with the others, in arrival order")
    func drainKeepsOrder() {
        var state = SchedulerState(queueCaps: [1], globalCap: 1, jobBatchSize: 10)
        state.add(Job(path: "a", rank: 0))
        state.add(Self.delete("b"))
        state.add(Job(path: "c", rank: 0))
        #expect(state.drainWaiting().map(\.path) == ["a", "b", "c"])
        #expect(state.isIdle)
    }

    static func sent(_ path: String, rank: Int = 0) -> Job { Job(path: path, rank: rank, small: true, sendsWithOthers: true) }

    @Test("small uploads sent together: a slot each for up to 4 of them, outside the queue's cap, until the global cap")
    func smallBatchesOutsideTheCap() {
        var state = SchedulerState(queueCaps: [1], globalCap: 3, smallBatchSize: 4)
        for index in 0..<14 { state.add(Self.sent("s\(index)")) }
        let slots = state.startSlots(now: 0)
        #expect(slots.map(\.jobs.count) == [4, 4, 4], "the queue's cap of 1 does not count small jobs")
        #expect(slots[0].jobs.map(\.path) == ["s0", "s1", "s2", "s3"], "arrival order kept")
        #expect(state.runningCount == 3)
        for job in slots[0].jobs.dropLast() { state.finish(job) }
        #expect(state.startSlots(now: 0).isEmpty, "one file of the first slot is still being sent")
        state.finish(slots[0].jobs[3])
        #expect(state.startSlots(now: 0) == [.batch([Self.sent("s12"), Self.sent("s13")])])
    }

    @Test("a small job that must go alone is not taken into the batch before it, and stops it")
    func aloneStopsTheBatch() {
        var state = SchedulerState(queueCaps: [1], globalCap: 4, smallBatchSize: 4)
        state.add(Self.sent("a"))
        state.add(Job(path: "retry", rank: 0, small: true))
        state.add(Self.sent("b"))
        state.add(Self.sent("c"))
        #expect(state.startSlots(now: 0) == [
            .single(Self.sent("a")),
            .single(Job(path: "retry", rank: 0, small: true)),
            .batch([Self.sent("b"), Self.sent("c")]),
        ])
        #expect(Job(path: "large", rank: 0, sendsWithOthers: true).sendsWithOthers == false, "only a small job goes with others")
    }

    @Test("the machine starts a batch, books each job on its own, and retries only the one that failed")
    func machineBooksEachJob() {
        var retry = RetryPolicy(attempts: 3, baseDelay: .seconds(1), factor: 2, maxDelay: .seconds(4))
        retry.offlineWait = .seconds(10)
        var machine = TransferStateMachine(queueCaps: [2], globalCap: 2, retry: retry, batchWindow: 0.25, batchLimit: 100,
                                           jobBatchSize: 1000)
        let jobs = (0..<3).map { Self.delete("f\($0)") }
        #expect(machine.handle(.jobsArrived(jobs), now: 0) == [.startBatch(jobs)])
        #expect(machine.handle(.jobSucceeded(jobs[0]), now: 1) == [.recordSuccess(jobs[0])])
        #expect(machine.handle(.jobFailed(jobs[1], failures: 1, .permanent), now: 1) == [.recordFailure(jobs[1], failures: 1)])
        let last = machine.handle(.jobFailed(jobs[2], failures: 1, .retryable(retryAfter: nil)), now: 1)
        #expect(last.contains(.recordRetry(jobs[2], failures: 1, delay: 1)))
        #expect(machine.runningCount == 0, "the batch's slot is free once its last job is over")
        #expect(machine.handle(.timerFired, now: 2.5).contains(.startBatch([jobs[2]])))
    }

    @Test("a batch that fails for want of the backend parks every job and sends one probe")
    func outageParksTheBatch() {
        let retry = RetryPolicy(attempts: 3, baseDelay: .seconds(1), factor: 2, maxDelay: .seconds(4))
        var machine = TransferStateMachine(queueCaps: [2], globalCap: 2, retry: retry, batchWindow: 0.25, batchLimit: 100,
                                           jobBatchSize: 1000)
        let jobs = (0..<3).map { Self.delete("f\($0)") }
        _ = machine.handle(.jobsArrived(jobs), now: 0)
        var actions: [TransferStateMachine.Action] = []
        for job in jobs { actions += machine.handle(.jobFailed(job, failures: 1, .outage), now: 1) }
        #expect(actions.filter { $0 == .probe }.count == 1)
        #expect(actions.filter { if case .park = $0 { true } else { false } }.count == 3)
        let back = machine.handle(.probeAnswered(reachable: false), now: 1)
        #expect(back.contains { if case .reportOffline = $0 { true } else { false } })
        let online = machine.handle(.probeAnswered(reachable: true), now: 3)
        #expect(online.contains(.startBatch(jobs)), "back online: the parked deletes start again as one batch")
    }
}
