import Testing

@testable import FerryCore
@testable import FerryEngine
@testable import FerryPlanning

@Suite("JobFeed")
struct JobFeedTests {
    static func job(_ path: String) -> FileRecord {
        FileRecord(pairId: 1, path: path, queue: "media", status: .needsUpload, updatedAt: 0)
    }

    @Test("jobs pushed before the engine asks are handed over together")
    func pushedFirst() async {
        let feed = JobFeed()
        #expect(feed.push([Self.job("a"), Self.job("b")]))
        #expect(feed.push([Self.job("c")]))
        #expect(await feed.next().map(\.path) == ["a", "b", "c"])
    }

    @Test("an engine waiting for jobs gets them when they are pushed")
    func waitingEngine() async {
        let feed = JobFeed()
        async let taken = feed.next()
        // Pushed whether or not the waiter is registered yet: either way it receives them.
        feed.push([Self.job("x")])
        #expect(await taken.map(\.path) == ["x"])
    }

    @Test("after close nothing is taken: pushes are refused and a waiter gets nothing")
    func closed() async {
        let feed = JobFeed()
        async let taken = feed.next()
        feed.close()
        #expect(await taken.isEmpty)
        #expect(!feed.push([Self.job("late")]))
        #expect(await feed.next().isEmpty)
    }

    @Test("cancelling the waiting task ends its wait with nothing")
    func cancelled() async {
        let feed = JobFeed()
        let waiter = Task { await feed.next() }
        waiter.cancel()
        #expect(await waiter.value.isEmpty)
        // The feed still works for the next waiter.
        feed.push([Self.job("y")])
        #expect(await feed.next().map(\.path) == ["y"])
    }

    @Test("a job counts as taken only once the engine accepts it, not when a waiting task receives it")
    func takenOnAcceptance() async {
        let feed = JobFeed()
        async let handed = feed.next()
        feed.push([Self.job("late")])
        let records = await handed
        #expect(records.map(\.path) == ["late"])
        // An engine that went idle and closed before reading this answer never ran the job:
        // the run must still list the file as held back, so the watcher looks at it again.
        feed.close()
        #expect(!feed.took("late"))
        #expect(feed.takenPaths.isEmpty)

        let running = JobFeed()
        running.push([Self.job("a")])
        running.accepted(await running.next())
        #expect(running.took("a"))
    }
}
