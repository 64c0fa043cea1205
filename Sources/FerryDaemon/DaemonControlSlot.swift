import FerrySystem
import Synchronization

/// The control API's way to the runtime that runs now. The API outlives a reload (SIGHUP):
/// its listeners, event streams and clients stay while one runtime stops and the next
/// starts, and each request is served by whichever runtime is installed when it asks.
public final class DaemonControlSlot: Sendable {
    private struct State {
        var current: DaemonControl?
        var waiters: [Int: CheckedContinuation<DaemonControl?, Never>] = [:]
        var nextWaiter = 0
        var closed = false
        var installs = 0
    }

    private let state = Mutex(State())

    /// The process's clock, for the waits of the API that reaches runtimes through the slot.
    public let clock: any FerryClock

    public init(clock: any FerryClock) {
        self.clock = clock
    }

    /// The runtime that starts now; a request waiting between two runtimes is served by it.
    /// True when it follows another (a reload).
    @discardableResult
    func install(_ control: DaemonControl) -> Bool {
        let (waiters, replaces) = state.withLock { state in
            state.current = control
            state.installs += 1
            defer { state.waiters = [:] }
            return (Array(state.waiters.values), state.installs > 1)
        }
        for waiter in waiters { waiter.resume(returning: control) }
        return replaces
    }

    /// The runtime `control` stops; requests from now wait for the next one.
    func remove(_ control: DaemonControl) {
        state.withLock { state in
            if state.current === control { state.current = nil }
        }
    }

    /// The process stops: no runtime will come, waiting requests get nil.
    public func close() {
        let waiters = state.withLock { state in
            state.closed = true
            state.current = nil
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// The runtime now, without waiting.
    public var now: DaemonControl? { state.withLock { $0.current } }

    /// The runtime now, or the next one to be installed within `limit` (a reload takes as
    /// long as the old runtime needs to stop at a resumable point); nil when none comes.
    public func current(waitingUpTo limit: Duration) async -> DaemonControl? {
        if let control = now { return control }
        let key = state.withLock { state -> Int in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskGroup(of: DaemonControl?.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let ready = self.state.withLock { state -> (Bool, DaemonControl?) in
                            if state.current != nil || state.closed || Task.isCancelled { return (true, state.current) }
                            state.waiters[key] = continuation
                            return (false, nil)
                        }
                        if ready.0 { continuation.resume(returning: ready.1) }
                    }
                } onCancel: {
                    let waiter = self.state.withLock { $0.waiters.removeValue(forKey: key) }
                    waiter?.resume(returning: nil)
                }
            }
            group.addTask {
                await self.clock.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
