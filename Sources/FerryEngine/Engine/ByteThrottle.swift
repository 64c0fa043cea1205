import FerryPluginAPI
import FerrySystem
import Synchronization

/// A token bucket shared by all transfers of a run: each chunk reserves its bytes and is
/// told how long to pause so the total rate stays under the limit. Parallel transfers keep
/// running; they just each pause a little.
///
/// The rate can change while transfers run (a bandwidth timetable switching at 18:00): the
/// next reservation uses the new rate, and no transfer is stopped or restarted for it.
public final class ByteThrottle: Sendable {
    private struct Bucket {
        var tokens: Double
        /// The clock's monotonic seconds at the last reservation.
        var last: Double
        /// Bytes per second; nil while unlimited.
        var rate: Int64?
    }

    private let bucket: Mutex<Bucket>
    private let clock: any FerryClock

    public init(bytesPerSecond: Int64?, clock: any FerryClock) {
        self.clock = clock
        bucket = Mutex(Bucket(tokens: 0, last: clock.now(), rate: bytesPerSecond.map { max(1, $0) }))
    }

    /// The limit in force; nil for none.
    public var bytesPerSecond: Int64? { bucket.withLock { $0.rate } }

    /// Changes the limit from now on (nil lifts it). Debt owed at the old rate is forgiven,
    /// so lifting a tight limit takes effect at once.
    public func update(bytesPerSecond: Int64?) {
        bucket.withLock { bucket in
            let rate = bytesPerSecond.map { max(1, $0) }
            guard rate != bucket.rate else { return }
            bucket.rate = rate
            bucket.tokens = max(0, bucket.tokens)
            bucket.last = clock.now()
        }
    }

    /// Takes `bytes` from the bucket (going into debt if needed) and returns the pause that
    /// pays the debt back at the configured rate.
    public func reserve(_ bytes: Int) -> Duration {
        let now = clock.now()
        let (debt, rate): (Double, Double) = bucket.withLock { bucket in
            guard let limit = bucket.rate else { return (0, 0) }
            let rate = Double(limit)
            let burst = max(rate / 4, 64 * 1024)
            bucket.tokens = min(burst, bucket.tokens + max(0, now - bucket.last) * rate)
            bucket.last = now
            bucket.tokens -= Double(bytes)
            return (-bucket.tokens, rate)
        }
        guard debt > 0, rate > 0 else { return .zero }
        return .microseconds(Int64(debt / rate * 1_000_000))
    }
}
