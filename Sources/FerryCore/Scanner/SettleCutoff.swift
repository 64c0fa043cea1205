/// Whether a file that no watcher event announced may still be being written, judged by its
/// modification time: it is fresh while that time is within the quiet period before `now`.
///
/// A time further ahead of `now` than the quiet period is not a write in progress but a
/// clock that disagrees: a camera set to the wrong zone whose import kept its times, an
/// archive unpacked with its times, the system clock stepped back. Such a file counts as
/// settled; judged fresh, it would wait until the clock caught up, looked at again every
/// quiet period. The change check around each upload still catches a file that changes
/// while it is sent.
public struct SettleCutoff: Sendable, Equatable {
    /// Wall-clock seconds since 1970.
    public var now: Double
    public var quietPeriod: Double

    public init(now: Double, quietPeriod: Double) {
        self.now = now
        self.quietPeriod = quietPeriod
    }

    public func isFresh(modifiedNanos: Int64) -> Bool {
        let modified = Double(modifiedNanos) / 1e9
        return modified > now - quietPeriod && modified < now + quietPeriod
    }
}
