import Synchronization

/// Jobs handed to an engine that is already running: files that settled in a watched
/// folder while its pair's run was under way. The engine takes them between transfers, in
/// queue priority with the rest, instead of a second engine starting on the same pair.
/// Once the engine is done it takes nothing more (`push` says so), and the follow-up run
/// plans those files as usual: they are in the journal already.
public final class JobFeed: Sendable {
    private struct State {
        var jobs: [FileRecord] = []
        var waiter: CheckedContinuation<[FileRecord], Never>?
        var closed = false
        /// Paths of the jobs the engine took (pushed jobs it never took are not here).
        var taken: Set<String> = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Hands jobs over; false when the engine no longer takes any.
    @discardableResult
    public func push(_ jobs: [FileRecord]) -> Bool {
        guard !jobs.isEmpty else { return true }
        let (accepted, resume): (Bool, (CheckedContinuation<[FileRecord], Never>, [FileRecord])?) = state.withLock { state in
            guard !state.closed else { return (false, nil) }
            state.jobs += jobs
            guard let waiter = state.waiter else { return (true, nil) }
            state.waiter = nil
            let taken = state.jobs
            state.jobs = []
            state.taken.formUnion(taken.lazy.map(\.path))
            return (true, (waiter, taken))
        }
        if let (waiter, taken) = resume { waiter.resume(returning: taken) }
        return accepted
    }

    /// The next jobs; empty once closed or when the waiting task is cancelled.
    func next() async -> [FileRecord] {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[FileRecord], Never>) in
                let ready: [FileRecord]? = state.withLock { state in
                    if !state.jobs.isEmpty || state.closed || Task.isCancelled {
                        let taken = state.jobs
                        state.jobs = []
                        state.taken.formUnion(taken.lazy.map(\.path))
                        return taken
                    }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                let waiter = state.waiter
                state.waiter = nil
                return waiter
            }
            waiter?.resume(returning: [])
        }
    }

    /// Whether the engine took a job for `path` from the feed.
    /// Paths of every job the engine took.
    var takenPaths: Set<String> { state.withLock { $0.taken } }

    public func took(_ path: String) -> Bool {
        state.withLock { $0.taken.contains(path) }
    }

    /// The engine is done: later pushes are refused, a waiting `next` returns empty.
    func close() {
        let waiter = state.withLock { state in
            state.closed = true
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: [])
    }
}
