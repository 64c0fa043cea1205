import FerryCore
import Synchronization

/// A run clock whose waits return at once: sleeping until a moment moves the clock there.
/// Time passes only when the engine waits for it, so a test of retries with backoff, or of
/// an outage of minutes, runs in microseconds and never depends on how fast the machine is.
public final class InstantClock: RunClock {
    private let current = Mutex<Double>(0)

    public init() {}

    public func now() -> Double { current.withLock { $0 } }

    public func sleep(until deadline: Double) async {
        current.withLock { $0 = max($0, deadline) }
        // Let the tasks that were ready before the wait run first.
        await Task.yield()
    }

    /// Seconds of virtual time that passed.
    public var elapsed: Double { now() }
}
