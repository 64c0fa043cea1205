import Foundation

/// The engine's sense of time: a monotonic clock in seconds, and a way to wait for a moment
/// on it. Runs use `SystemRunClock`; tests hand in a clock whose waits return at once and
/// move its time forward, so retries and outages of minutes run in microseconds.
public protocol RunClock: Sendable {
    /// Seconds on a monotonic clock (any origin).
    func now() -> Double
    /// Returns once `now()` has reached `deadline`, or when the task is cancelled.
    func sleep(until deadline: Double) async
    /// Seconds since 1970 now: read once at a run's start, it stamps the run's trash folder
    /// and its conflict copies' names. The system's clock by default; a simulation that
    /// replays a run from a seed passes the same moment every time.
    func wallTime() -> Double
}

extension RunClock {
    public func wallTime() -> Double { Date().timeIntervalSince1970 }
}

/// Real time: `ContinuousClock` and `Task.sleep`.
public struct SystemRunClock: RunClock {
    private let origin = ContinuousClock.now

    public init() {}

    public func now() -> Double {
        origin.duration(to: .now).inSeconds
    }

    public func sleep(until deadline: Double) async {
        let wait = deadline - now()
        // One millisecond more, so that the deadline has passed when the sleeper wakes.
        if wait > 0 { try? await Task.sleep(for: .milliseconds(Int64(wait * 1000) + 1)) }
    }
}
