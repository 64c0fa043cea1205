import FerryPluginAPI
import Foundation

/// Exponential backoff for retryable failures.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first one included; a file fails for good after this many.
    public var attempts: Int = 5
    public var baseDelay: Duration = .seconds(1)
    public var factor: Double = 2
    public var maxDelay: Duration = .seconds(30)
    /// How long a push or pull waits for a backend that stopped answering (probing it with
    /// the same backoff) before it leaves the remaining files queued and exits; nil waits
    /// forever. The daemon always waits.
    public var offlineWait: Duration? = .seconds(600)
    /// Passes over the run's files in all, the main one included (rclone's `--retries`).
    /// A file whose attempts all failed on transient errors (5xx, a reset, a cut reply) is
    /// set aside and tried again, with all its attempts, once every other file is over:
    /// at one failing request in five, a file's few requests fail together often enough
    /// that about one file in thirty ran out of 5 attempts in a single pass. Permanent
    /// errors are never set aside.
    public var passes: Int = 3

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
        let cap = maxDelay.inSeconds
        var seconds = min(cap, baseDelay.inSeconds * pow(factor, exponent))
        if let retryAfter { seconds = min(cap, max(seconds, retryAfter.inSeconds)) }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// The wait after a backend error, honouring the server's Retry-After hint.
    public func delay(afterFailures failedAttempts: Int, for error: BackendError) -> Duration {
        delay(afterFailures: failedAttempts, retryAfter: error.retryAfterSeconds.map { .milliseconds(Int64($0 * 1000)) })
    }

    /// Whether a file that has failed `failedAttempts` times may be tried again.
    public func allowsAnotherAttempt(afterFailures failedAttempts: Int) -> Bool {
        failedAttempts < attempts
    }

    /// The wait before pass `pass` (2 is the first pass after the main one) begins: the
    /// backoff goes on from where the set-aside files' own attempts left it.
    public func delay(beforePass pass: Int) -> Duration {
        delay(afterFailures: attempts + max(0, pass - 2))
    }
}
