/// Exponential backoff for retryable failures.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first one included; a file fails for good after this many.
    public var attempts: Int = 5
    public var baseDelay: Duration = .seconds(1)
    public var factor: Double = 2
    public var maxDelay: Duration = .seconds(30)

    public init(attempts: Int = 5, baseDelay: Duration = .seconds(1), factor: Double = 2, maxDelay: Duration = .seconds(30)) {
        self.attempts = attempts
        self.baseDelay = baseDelay
        self.factor = factor
        self.maxDelay = maxDelay
    }

    /// The wait before attempt `failedAttempts + 1`, after `failedAttempts` failures
    /// (1 → base, 2 → base × factor, …, capped). A server's Retry-After wins when longer,
    /// up to the cap.
    public func delay(afterFailures failedAttempts: Int, retryAfter: Duration? = nil) -> Duration {
        // Past 64 doublings every delay is at the cap; clamping keeps huge counts finite.
        let exponent = Double(min(64, max(0, failedAttempts - 1)))
        let base = Double(baseDelay.components.seconds) + Double(baseDelay.components.attoseconds) / 1e18
        let cap = Double(maxDelay.components.seconds) + Double(maxDelay.components.attoseconds) / 1e18
        var seconds = min(cap, base * pow(factor, exponent))
        if let retryAfter {
            let hint = Double(retryAfter.components.seconds) + Double(retryAfter.components.attoseconds) / 1e18
            seconds = min(cap, max(seconds, hint))
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// Whether a file that has failed `failedAttempts` times may be tried again.
    public func allowsAnotherAttempt(afterFailures failedAttempts: Int) -> Bool {
        failedAttempts < attempts
    }

    private func pow(_ base: Double, _ exponent: Double) -> Double {
        var result = 1.0
        var remaining = Int(exponent)
        while remaining > 0 && result < 1e12 {
            result *= base
            remaining -= 1
        }
        return result
    }
}
