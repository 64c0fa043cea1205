/// How long to wait before starting a plugin again after it failed: nothing the first
/// time (one crash may be a fluke), then doubling from a quarter second up to `maximum`.
/// The count resets once the plugin answers a request, so a plugin that crashes now and
/// then restarts at once, and one that crashes in a loop is started at most twice a minute.
public struct RestartBackoff: Sendable, Equatable {
    public var base: Duration
    public var maximum: Duration
    /// After this many failed starts in a row (no handshake completed), the plugin is
    /// considered broken: errors become permanent, instead of looking like an outage that
    /// is waited out.
    public var startFailuresBeforeGivingUp: Int

    public init(base: Duration = .milliseconds(250), maximum: Duration = .seconds(30), startFailuresBeforeGivingUp: Int = 3) {
        self.base = base
        self.maximum = maximum
        self.startFailuresBeforeGivingUp = startFailuresBeforeGivingUp
    }

    public func delay(afterFailures failures: Int) -> Duration {
        guard failures > 1 else { return .zero }
        var delay = base
        for _ in 2..<failures {
            delay *= 2
            if delay >= maximum { return maximum }
        }
        return min(delay, maximum)
    }
}
