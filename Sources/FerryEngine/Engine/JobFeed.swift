import FerryPlanning
import Synchronization

/// Jobs handed to an engine that is already running: files that settled in a watched
/// folder while its pair's run was under way. The engine takes them between transfers, in
/// queue priority with the rest, instead of a second engine starting on the same pair.
/// Once the engine is done it takes nothing more (`push` says so), and the follow-up run
/// plans those files as usual: they are in the journal already.
///
/// A job counts as taken only once the engine says it accepted it (`accepted`), not when
/// `next` hands it out: the engine may end between the two (idle, with a `next` already
/// answered but never read), and a file counted as taken then would be left out of the
/// run's held-back files and wait for the next periodic rescan.
public final class JobFeed: Sendable {
    private struct State {
        var jobs: [FileRecord] = []
        var waiter: CheckedContinuation<[FileRecord], Never>?
        var closed = false
        /// Paths of the jobs the engine accepted (pushed jobs it never accepted are not here).
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
            let handed = state.jobs
            state.jobs = []
            return (true, (waiter, handed))
        }
        if let (waiter, handed) = resume { waiter.resume(returning: handed) }
        return accepted
    }

    /// The next jobs; empty once closed or when the waiting task is cancelled. They count as
    /// taken once the engine calls `accepted` with them.
    package func next() async -> [FileRecord] {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[FileRecord], Never>) in
                let ready: [FileRecord]? = state.withLock { state in
                    if !state.jobs.isEmpty || state.closed || Task.isCancelled {
                        let handed = state.jobs
                        state.jobs = []
                        return handed
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

    /// The engine queued these jobs (from `next`) and will run them or leave them in the
    /// journal for the next run.
    package func accepted(_ jobs: [FileRecord]) {
        guard !jobs.isEmpty else { return }
        state.withLock { $0.taken.formUnion(jobs.lazy.map(\.path)) }
    }

    /// Paths of every job the engine accepted.
    package var takenPaths: Set<String> { state.withLock { $0.taken } }

    /// Whether the engine accepted a job for `path` from the feed.
    public func took(_ path: String) -> Bool {
        state.withLock { $0.taken.contains(path) }
    }

    /// The engine is done: later pushes are refused, a waiting `next` returns empty.
    package func close() {
        let waiter = state.withLock { state in
            state.closed = true
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: [])
    }
}
