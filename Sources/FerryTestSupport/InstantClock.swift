import FerrySystem
import Synchronization

/// A clock whose waits return at once: sleeping until a moment moves the clock there.
/// Time passes only when the code under test waits for it, so a test of retries with
/// backoff, or of an outage of minutes, runs in microseconds and never depends on how fast
/// the machine is.
public final class InstantClock: FerryClock {
    private let current = Mutex<Double>(0)
    private let wallStart: Double?

    /// `wallStart`: seconds since 1970 when the clock starts, for a run replayed from a seed
    /// (its trash folder and conflict copies then get the same names every time); nil reads
    /// the system's wall clock, moved forward by the time the clock was advanced.
    public init(wallStart: Double? = nil) {
        self.wallStart = wallStart
    }

    public func now() -> Double { current.withLock { $0 } }

    public func sleep(until deadline: Double) async {
        current.withLock { $0 = max($0, deadline) }
        // Let the tasks that were ready before the wait run first.
        await Task.yield()
    }

    public func wallTime() -> Double {
        (wallStart ?? SystemClock().wallTime()) + now()
    }

    /// Seconds of virtual time that passed.
    public var elapsed: Double { now() }
}
