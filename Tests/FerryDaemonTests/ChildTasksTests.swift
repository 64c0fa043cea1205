@testable import FerryDaemon
import FerryTestSupport
import Testing

/// The daemon's parts start their work as children of their `run()`: these check that such
/// work runs, can be cancelled alone, is cancelled with the part, and never outlives it.
@Suite("ChildTasks")
struct ChildTasksTests {
    /// Work that says when it started and waits until cancelled.
    static func waitsUntilCancelled(started: AsyncStream<String>.Continuation, name: String,
                                    ended: LockedValue<[String]>) -> ChildTasks.Work {
        return {
            started.yield(name)
            let (never, _) = AsyncStream<Void>.makeStream()
            for await _ in never {}
            ended.withLock { $0.append(name) }
        }
    }

    @Test("work started before run() runs once it does; cancelling one handle stops only that work")
    func handleCancelsOne() async {
        let tasks = ChildTasks()
        let (started, starter) = AsyncStream<String>.makeStream()
        let ended = LockedValue<[String]>([])
        let first = tasks.start(Self.waitsUntilCancelled(started: starter, name: "first", ended: ended))
        let second = tasks.start(Self.waitsUntilCancelled(started: starter, name: "second", ended: ended))
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await tasks.run() }
            var seen: Set<String> = []
            for await name in started {
                seen.insert(name)
                if seen.count == 2 { break }
            }
            first.cancel()
            await first.finished()
            #expect(first.isFinished && !second.isFinished)
            #expect(ended.withLock { $0 } == ["first"])
            group.cancelAll()
        }
        // run() returned: everything it ran has ended.
        #expect(second.isFinished)
        #expect(Set(ended.withLock { $0 }) == ["first", "second"])
    }

    @Test("work that ends by itself finishes its handle, and run() keeps taking more")
    func workEndsByItself() async {
        let tasks = ChildTasks()
        let count = LockedValue(0)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await tasks.run() }
            for _ in 0..<50 {
                let handle = tasks.start { count.withLock { $0 += 1 } }
                await handle.finished()
            }
            group.cancelAll()
        }
        #expect(count.withLock { $0 } == 50)
    }

    @Test("after run() has ended, started work never runs and its handle is already finished")
    func startAfterEnd() async {
        let tasks = ChildTasks()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await tasks.run() }
            group.cancelAll()
        }
        let ran = LockedValue(false)
        let handle = tasks.start { ran.withLock { $0 = true } }
        #expect(handle.isFinished)
        await handle.finished()
        #expect(!ran.withLock { $0 })
    }

    @Test("a handle cancelled before its work begins: the work never runs")
    func cancelBeforeStart() async {
        let tasks = ChildTasks()
        let sawCancel = LockedValue<Bool?>(nil)
        let handle = tasks.start { sawCancel.withLock { $0 = Task.isCancelled } }
        handle.cancel()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await tasks.run() }
            await handle.finished()
            group.cancelAll()
        }
        #expect(sawCancel.withLock { $0 } == nil)
    }
}
