import Foundation

/// Ferry's sense of time, passed to every part that reads the time or waits: a monotonic
/// clock for durations and deadlines, the wall clock for what is stored or shown (journal
/// times, conflict names, the status page), and a wait. `SystemClock` is the only place
/// that reads the system's clocks or sleeps; tests hand in a clock whose waits return at
/// once and move its time forward, so retries, outages and quiet periods of minutes run in
/// microseconds, and a run replayed from a seed names its files the same every time.
public protocol FerryClock: Sendable {
    /// Seconds on a monotonic clock (any origin): durations and deadlines.
    func now() -> Double
    /// Returns once `now()` has reached `deadline`, or when the task is cancelled.
    func sleep(until deadline: Double) async
    /// Seconds since 1970: what is kept in the journal and the history, and shown.
    func wallTime() -> Double
}

extension FerryClock {
    /// Waits `seconds` on the monotonic clock (returns at once for zero or less).
    public func sleep(for seconds: Double) async {
        await sleep(until: now() + seconds)
    }

    /// Waits `duration`, as `sleep(for:)` in seconds.
    public func sleep(for duration: Duration) async {
        let (seconds, attoseconds) = duration.components
        await sleep(for: Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// The wall time as a `Date`.
    public func wallDate() -> Date {
        Date(timeIntervalSince1970: wallTime())
    }
}

/// Real time: `ContinuousClock`, the system's wall clock and `Task.sleep`. Every instance
/// reads one monotonic origin (the first use in the process), so moments taken from two of
/// them compare.
public struct SystemClock: FerryClock {
    private static let origin = ContinuousClock.now

    public init() {}

    public func now() -> Double {
        let (seconds, attoseconds) = Self.origin.duration(to: .now).components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    public func sleep(until deadline: Double) async {
        let wait = deadline - now()
        // One millisecond more, so that the deadline has passed when the sleeper wakes.
        if wait > 0 { try? await Task.sleep(for: .milliseconds(Int64(wait * 1000) + 1)) }
    }

    public func wallTime() -> Double {
        Date().timeIntervalSince1970
    }
}
