import FerryPluginAPI
import Synchronization

/// A token bucket shared by all transfers of a run: each chunk reserves its bytes and is
/// told how long to pause so the total rate stays under the limit. Parallel transfers keep
/// running; they just each pause a little.
public final class ByteThrottle: Sendable {
    private struct Bucket {
        var tokens: Double
        var last: ContinuousClock.Instant
    }

    public let bytesPerSecond: Int64
    private let burst: Double
    private let bucket: Mutex<Bucket>

    public init(bytesPerSecond: Int64) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        burst = max(Double(self.bytesPerSecond) / 4, 64 * 1024)
        bucket = Mutex(Bucket(tokens: 0, last: .now))
    }

    /// Takes `bytes` from the bucket (going into debt if needed) and returns the pause that
    /// pays the debt back at the configured rate.
    public func reserve(_ bytes: Int) -> Duration {
        let rate = Double(bytesPerSecond)
        let now = ContinuousClock.now
        let debt: Double = bucket.withLock { bucket in
            bucket.tokens = min(burst, bucket.tokens + bucket.last.duration(to: now).inSeconds * rate)
            bucket.last = now
            bucket.tokens -= Double(bytes)
            return -bucket.tokens
        }
        guard debt > 0 else { return .zero }
        return .microseconds(Int64(debt / rate * 1_000_000))
    }
}
