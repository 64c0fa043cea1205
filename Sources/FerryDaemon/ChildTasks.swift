import Synchronization

/// Work a long-lived part of the daemon starts while it runs (a run, a timer, a feed of new
/// files), run as child tasks of the part's `run()` instead of unstructured tasks: none
/// outlives the part, and cancelling `run()` cancels them all and waits for them. Each can
/// still be cancelled and awaited on its own through its `Handle`, as a pause does with the
/// run under way.
package final class ChildTasks: Sendable {
    package typealias Work = @Sendable () async -> Void

    /// One piece of work started through `start`.
    package final class Handle: Sendable {
        private struct State {
            var cancelRequested = false
            var finished = false
            var cancelWaiter: CheckedContinuation<Void, Never>?
            var finishWaiters: [CheckedContinuation<Void, Never>] = []
        }

        private let state = Mutex(State())

        /// Cancels the work (its task sees `Task.isCancelled`); it ends when it notices.
        package func cancel() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard !state.cancelRequested, !state.finished else { return nil }
                state.cancelRequested = true
                defer { state.cancelWaiter = nil }
                return state.cancelWaiter
            }
            waiter?.resume()
        }

        fileprivate var isCancelRequested: Bool { state.withLock { $0.cancelRequested } }

        /// True once the work has ended, or will never run (its part had stopped).
        package var isFinished: Bool { state.withLock { $0.finished } }

        /// Returns once the work has ended, or at once when it will never run.
        package func finished() async {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state in
                    if !state.finished { state.finishWaiters.append(continuation) }
                    return state.finished
                }
                if done { continuation.resume() }
            }
        }

        fileprivate func markFinished() {
            let (waiters, cancelWaiter) = state.withLock { state in
                state.finished = true
                defer {
                    state.finishWaiters = []
                    state.cancelWaiter = nil
                }
                return (state.finishWaiters, state.cancelWaiter)
            }
            cancelWaiter?.resume()
            for waiter in waiters { waiter.resume() }
        }

        /// Returns once `cancel()` is called or the calling task is cancelled.
        fileprivate func cancelRequested() async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let now = state.withLock { state in
                        if !state.cancelRequested, !state.finished { state.cancelWaiter = continuation }
                        return state.cancelRequested || state.finished
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                cancel()
            }
        }
    }

    private struct Registry {
        var closed = false
        var live: [ObjectIdentifier: Handle] = [:]
    }

    private let registry = Mutex(Registry())
    private let started: AsyncStream<(Handle, Work)>
    private let starter: AsyncStream<(Handle, Work)>.Continuation

    package init() {
        (started, starter) = AsyncStream.makeStream()
    }

    /// Starts `work` as a child of `run()`: at once when `run()` is running, when it starts
    /// otherwise. After `run()` has ended the work never runs and its handle is finished.
    @discardableResult
    package func start(_ work: @escaping Work) -> Handle {
        let handle = Handle()
        let open = registry.withLock { registry in
            if !registry.closed { registry.live[ObjectIdentifier(handle)] = handle }
            return !registry.closed
        }
        guard open, case .enqueued = starter.yield((handle, work)) else {
            handle.markFinished()
            return handle
        }
        return handle
    }

    /// Runs what is started until the calling task is cancelled, then cancels it all and
    /// returns once every piece has ended. Called once.
    package func run() async {
        await withDiscardingTaskGroup { group in
            for await (handle, work) in started {
                group.addTask { await Self.perform(work, handle: handle, in: self) }
            }
        }
        // What was started but never reached the group will not run: its waiters go on.
        let left = registry.withLock { registry in
            registry.closed = true
            defer { registry.live = [:] }
            return Array(registry.live.values)
        }
        starter.finish()
        for handle in left { handle.markFinished() }
    }

    /// Runs the work until it ends or its handle is cancelled, whichever comes first.
    private static func perform(_ work: @escaping Work, handle: Handle, in tasks: ChildTasks) async {
        // Cancelled before it began (a pause right after a request): it does not begin.
        if !handle.isCancelRequested {
            await race(work, against: handle)
        }
        _ = tasks.registry.withLock { $0.live.removeValue(forKey: ObjectIdentifier(handle)) }
        handle.markFinished()
    }

    private static func race(_ work: @escaping Work, against handle: Handle) async {
        await withTaskGroup(of: Void.self) { race in
            race.addTask { await work() }
            race.addTask { await handle.cancelRequested() }
            await race.next()
            race.cancelAll()
        }
    }
}
