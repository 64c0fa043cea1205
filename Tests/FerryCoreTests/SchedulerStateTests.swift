import Testing
@testable import FerryCore
@testable import FerryPlanning
import FerryPluginAPI

@Suite("SchedulerState")
struct SchedulerStateTests {
    typealias Job = SchedulerState.Job

    /// Starts and immediately finishes jobs one batch at a time until nothing more starts.
    /// A state that kept starting jobs would fail here instead of hanging the suite.
    static func drain(_ state: inout SchedulerState, now: Double = 0) -> [Job] {
        var order: [Job] = []
        for _ in 0..<roundBound {
            let started = state.start(now: now)
            if started.isEmpty { return order }
            order.append(contentsOf: started)
            for job in started { state.finish(job) }
        }
        Issue.record("still starting jobs after \(roundBound) rounds")
        return order
    }

    /// More rounds than any test here needs (10,000 jobs, one opening a round).
    static let roundBound = 100_000

    @Test("strict priority: with one slot, rank 0 first, then 1, …, FIFO within a rank")
    func strictPriority() {
        var state = SchedulerState(queueCaps: [4, 2, 2, 1], globalCap: 1)
        let added = [
            Job(path: "archive-1", rank: 3), Job(path: "gpx-1", rank: 2), Job(path: "media-1", rank: 1),
            Job(path: "thumb-1", rank: 0), Job(path: "media-2", rank: 1), Job(path: "archive-2", rank: 3),
            Job(path: "thumb-2", rank: 0), Job(path: "gpx-2", rank: 2), Job(path: "thumb-3", rank: 0),
        ]
        for job in added { state.add(job) }
        #expect(state.waitingCount == added.count)
        var order: [String] = []
        for _ in 0..<Self.roundBound {
            let started = state.start(now: 0)
            #expect(started.count <= 1)
            guard let job = started.first else { break }
            #expect(state.runningCount == 1)
            #expect(state.start(now: 0).isEmpty, "no second job while the only slot is taken")
            order.append(job.path)
            state.finish(job)
        }
        #expect(order == [
            "thumb-1", "thumb-2", "thumb-3", "media-1", "media-2", "gpx-1", "gpx-2", "archive-1", "archive-2",
        ])
        #expect(state.isIdle)
    }

    @Test("a job of a higher queue added later still starts before waiting lower ones")
    func lateHighPriority() {
        var state = SchedulerState(queueCaps: [1, 1], globalCap: 1)
        state.add(Job(path: "low-1", rank: 1))
        state.add(Job(path: "low-2", rank: 1))
        let first = state.start(now: 0)
        #expect(first.map(\.path) == ["low-1"])
        state.add(Job(path: "high", rank: 0))
        state.finish(first[0])
        #expect(state.start(now: 0).map(\.path) == ["high"])
    }

    @Test("a capped queue leaves free slots to lower queues")
    func perQueueCap() {
        var state = SchedulerState(queueCaps: [1, 1], globalCap: 4)
        for index in 1...3 { state.add(Job(path: "high-\(index)", rank: 0)) }
        for index in 1...3 { state.add(Job(path: "low-\(index)", rank: 1)) }
        let started = state.start(now: 0)
        #expect(started.map(\.path) == ["high-1", "low-1"])
        #expect(state.runningCount == 2)
        #expect(state.waitingCount == 4)
        #expect(state.start(now: 0).isEmpty)
        state.finish(started[1])
        #expect(state.start(now: 0).map(\.path) == ["low-2"], "rank 0 is still at its cap")
        state.finish(started[0])
        #expect(state.start(now: 0).map(\.path) == ["high-2"])
    }

    @Test("small files pass their queue's cap: they are bound by the global cap only, in priority order")
    func smallFilesPassTheQueueCap() {
        var state = SchedulerState(queueCaps: [1, 2], globalCap: 4)
        for index in 1...3 { state.add(Job(path: "thumb-\(index)", rank: 0, small: true)) }
        state.add(Job(path: "video-1", rank: 1))
        state.add(Job(path: "video-2", rank: 1))
        state.add(Job(path: "video-3", rank: 1))
        for index in 1...4 { state.add(Job(path: "photo-\(index)", rank: 1, small: true)) }
        let first = state.start(now: 0)
        #expect(first.map(\.path) == ["thumb-1", "thumb-2", "thumb-3", "video-1"],
                "three small thumbnails over a cap of 1; the higher queue fills the slots first")
        #expect(state.start(now: 0).isEmpty, "the global cap is full")
        state.finish(first[0])
        #expect(state.start(now: 0).map(\.path) == ["video-2"], "FIFO within the queue while it is under its cap")
        state.finish(first[1])
        #expect(state.start(now: 0).map(\.path) == ["photo-1"], "media is at its cap of 2: a small photo passes video-3")
        state.finish(first[2])
        #expect(state.start(now: 0).map(\.path) == ["photo-2"])
        state.finish(first[3])
        #expect(state.start(now: 0).map(\.path) == ["video-3"], "a large file goes again once its queue has room")
        #expect(state.runningCount == 4)
    }

    @Test("a small job finished twice frees one slot")
    func smallFinishIsSafe() {
        var state = SchedulerState(queueCaps: [1], globalCap: 2)
        let small = Job(path: "small", rank: 0, small: true)
        state.add(small)
        state.add(Job(path: "large", rank: 0))
        #expect(state.start(now: 0).map(\.path) == ["small", "large"])
        state.finish(small)
        state.finish(small)
        #expect(state.runningCount == 1)
        #expect(state.isIdle == false)
    }

    @Test("a batchable job is never small: batches stay under the queue's cap")
    func batchesStayCapped() {
        #expect(Job(path: "delete", rank: 0, batchable: true, small: true).small == false)
    }

    @Test("per-queue caps fill in priority order")
    func capsFillInOrder() {
        var state = SchedulerState(queueCaps: [2, 3, 1], globalCap: 10)
        for rank in 0..<3 {
            for index in 0..<5 { state.add(Job(path: "r\(rank)-\(index)", rank: rank)) }
        }
        let started = state.start(now: 0)
        #expect(started.map(\.path) == ["r0-0", "r0-1", "r1-0", "r1-1", "r1-2", "r2-0"])
        #expect(state.runningCount == 6)
    }

    @Test("the global cap bounds the jobs running over all queues")
    func globalCap() {
        var state = SchedulerState(queueCaps: [4, 4], globalCap: 3)
        for index in 0..<5 { state.add(Job(path: "a\(index)", rank: 0)) }
        for index in 0..<5 { state.add(Job(path: "b\(index)", rank: 1)) }
        let first = state.start(now: 0)
        #expect(first.map(\.path) == ["a0", "a1", "a2"])
        #expect(state.runningCount == 3)
        #expect(state.start(now: 0).isEmpty)
        state.finish(first[0])
        #expect(state.runningCount == 2)
        #expect(state.start(now: 0).map(\.path) == ["a3"])
        state.finish(first[1])
        state.finish(first[2])
        #expect(state.start(now: 0).map(\.path) == ["a4", "b0"])
    }

    @Test("caps and the global cap below 1 count as 1")
    func minimumCaps() {
        var state = SchedulerState(queueCaps: [0, -5], globalCap: 0)
        state.add(Job(path: "a", rank: 0))
        state.add(Job(path: "b", rank: 1))
        #expect(state.start(now: 0).map(\.path) == ["a"])
    }

    @Test("finish frees a slot only once; finishing an unknown job changes nothing")
    func finishIsSafe() {
        var state = SchedulerState(queueCaps: [1], globalCap: 1)
        state.add(Job(path: "a", rank: 0))
        state.add(Job(path: "b", rank: 0))
        let started = state.start(now: 0)
        state.finish(started[0])
        state.finish(started[0])
        #expect(state.runningCount == 0)
        state.finish(Job(path: "ghost", rank: 7))
        #expect(state.runningCount == 0)
        #expect(state.start(now: 0).map(\.path) == ["b"])
        #expect(state.runningCount == 1)
    }

    @Test("ranks out of range go to the nearest queue")
    func rankClamping() {
        var state = SchedulerState(queueCaps: [1, 1], globalCap: 1)
        state.add(Job(path: "unknown-queue", rank: 9))
        state.add(Job(path: "negative", rank: -1))
        let first = state.start(now: 0)
        #expect(first == [Job(path: "negative", rank: 0)])
        state.finish(first[0])
        let second = state.start(now: 0)
        #expect(second == [Job(path: "unknown-queue", rank: 1)])
        state.finish(second[0])
        #expect(state.isIdle)
    }

    @Test("a delayed job does not start before its time, and starts at or after it")
    func delayedJob() {
        var state = SchedulerState(queueCaps: [1], globalCap: 1)
        state.add(Job(path: "retry", rank: 0), readyAt: 10)
        #expect(state.nextReadyTime == 10)
        #expect(state.waitingCount == 1)
        #expect(!state.isIdle)
        #expect(state.start(now: 0).isEmpty)
        #expect(state.start(now: 9.999).isEmpty)
        #expect(state.nextReadyTime == 10)
        let started = state.start(now: 10)
        #expect(started.map(\.path) == ["retry"])
        #expect(state.nextReadyTime == nil)
        #expect(!state.isIdle)
        state.finish(started[0])
        #expect(state.isIdle)
    }

    @Test("a job ready in the past starts now")
    func delayedInThePast() {
        var state = SchedulerState(queueCaps: [1], globalCap: 1)
        state.add(Job(path: "late", rank: 0), readyAt: 5)
        #expect(state.start(now: 100).map(\.path) == ["late"])
    }

    @Test("a delayed job does not hold back ready jobs, and keeps its priority once ready")
    func delayedPriority() {
        var state = SchedulerState(queueCaps: [1, 1], globalCap: 1)
        state.add(Job(path: "high-retry", rank: 0), readyAt: 10)
        state.add(Job(path: "low-1", rank: 1))
        state.add(Job(path: "low-2", rank: 1))
        let first = state.start(now: 0)
        #expect(first.map(\.path) == ["low-1"])
        state.finish(first[0])
        let second = state.start(now: 10)
        #expect(second.map(\.path) == ["high-retry"])
        state.finish(second[0])
        #expect(state.start(now: 10).map(\.path) == ["low-2"])
    }

    @Test("delayed jobs become ready in order of their time")
    func delayedOrder() {
        var state = SchedulerState(queueCaps: [1], globalCap: 1)
        state.add(Job(path: "c", rank: 0), readyAt: 30)
        state.add(Job(path: "a", rank: 0), readyAt: 10)
        state.add(Job(path: "b", rank: 0), readyAt: 20)
        #expect(state.nextReadyTime == 10)
        #expect(Self.drain(&state, now: 15).map(\.path) == ["a"])
        #expect(state.nextReadyTime == 20)
        #expect(Self.drain(&state, now: 100).map(\.path) == ["b", "c"])
        #expect(state.nextReadyTime == nil)
        #expect(state.isIdle)
    }

    @Test("isIdle and waitingCount track ready, delayed and running jobs")
    func idleAndCounts() {
        var state = SchedulerState(queueCaps: [2, 2], globalCap: 2)
        #expect(state.isIdle)
        #expect(state.waitingCount == 0)
        #expect(state.nextReadyTime == nil)
        state.add(Job(path: "a", rank: 0))
        state.add(Job(path: "b", rank: 1), readyAt: 50)
        #expect(state.waitingCount == 2)
        let started = state.start(now: 0)
        #expect(started.count == 1)
        #expect(state.waitingCount == 1)
        #expect(state.runningCount == 1)
        state.finish(started[0])
        #expect(!state.isIdle, "a delayed job is still waiting")
        #expect(Self.drain(&state, now: 50).map(\.path) == ["b"])
        #expect(state.isIdle)
    }

    @Test("the same job may be queued again after it finished (a retry)")
    func requeue() {
        var state = SchedulerState(queueCaps: [1], globalCap: 1)
        let job = Job(path: "flaky", rank: 0)
        state.add(job)
        let first = state.start(now: 0)
        state.finish(first[0])
        state.add(job, readyAt: 1)
        #expect(state.start(now: 0.5).isEmpty)
        #expect(state.start(now: 1) == [job])
    }

    @Test("10,000 jobs drain completely, each once, in priority then FIFO order")
    func manyJobs() {
        var state = SchedulerState(queueCaps: [4, 2, 2, 1], globalCap: 4)
        let count = 10_000
        for index in 0..<count { state.add(Job(path: String(index), rank: index % 4)) }
        #expect(state.waitingCount == count)
        var order: [Job] = []
        var running: [Job] = []
        // Finish the oldest running job each round, so slots open one at a time.
        for _ in 0..<Self.roundBound {
            let started = state.start(now: 0)
            #expect(state.runningCount <= 4)
            order.append(contentsOf: started)
            running.append(contentsOf: started)
            guard !running.isEmpty else { break }
            state.finish(running.removeFirst())
        }
        #expect(order.count == count)
        #expect(Set(order.map(\.path)).count == count)
        #expect(state.isIdle)
        #expect(state.waitingCount == 0)
        for rank in 0..<4 {
            let paths = order.filter { $0.rank == rank }.map { Int($0.path)! }
            #expect(paths == Array(stride(from: rank, to: count, by: 4)), "FIFO within rank \(rank)")
        }
        // Strict priority: once a lower-ranked job started, every higher-ranked one had started before it
        // or could not start because its queue was at its cap.
        let firstArchive = order.firstIndex { $0.rank == 3 } ?? 0
        #expect(order[..<firstArchive].filter { $0.rank == 0 }.count > 0)
    }

    @Test("jobs added while others run are interleaved by priority")
    func addWhileRunning() {
        var state = SchedulerState(queueCaps: [2, 2], globalCap: 2)
        for index in 0..<1500 { state.add(Job(path: "low-\(index)", rank: 1)) }
        var started = 0
        var running: [Job] = []
        for round in 0..<1500 {
            if round == 1200 { state.add(Job(path: "high", rank: 0)) }
            let batch = state.start(now: 0)
            if let high = batch.first(where: { $0.rank == 0 }) {
                #expect(high.path == "high")
                #expect(round == 1200, "high starts as soon as a slot frees")
            }
            started += batch.count
            running.append(contentsOf: batch)
            if !running.isEmpty { state.finish(running.removeFirst()) }
        }
        started += Self.drain(&state).count
        for job in running { state.finish(job) }
        #expect(started == 1501)
        #expect(state.isIdle)
    }
}
