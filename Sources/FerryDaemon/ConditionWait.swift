import FerryCore

/// The daemon's view of one folder's run conditions (`when:`): whether work asked for now
/// may run, or waits until a recheck. Pure logic over values; the time is passed in.
///
/// Work that arrives while the folder waits is kept (the runner merges it into one pending
/// request) and runs at the first recheck that finds the conditions holding; a new request
/// does not probe the machine again before the recheck is due.
public struct ConditionWait: Sendable, Equatable {
    public enum Decision: Sendable, Equatable {
        /// The conditions hold: run what is pending.
        case run
        /// They do not: wait, say why, check again at `recheckAt`.
        case wait(reason: String, recheckAt: Double)
    }

    /// Seconds between two checks while waiting (`watch.condition_interval`).
    public var interval: Double
    /// What the folder waits for, nil when it may run.
    public private(set) var reason: String?
    /// When the conditions are next read, while waiting.
    public private(set) var recheckAt: Double?

    public init(interval: Double) {
        self.interval = interval
    }

    /// Whether the conditions must be read before work runs: always when not waiting, and
    /// while waiting only once the recheck is due.
    public func probeDue(now: Double) -> Bool {
        recheckAt.map { now >= $0 } ?? true
    }

    /// What to do with the reading's unmet conditions (`RunConditionCheck.unmet`).
    public mutating func decide(unmet: [String], now: Double) -> Decision {
        guard !unmet.isEmpty else {
            reason = nil
            recheckAt = nil
            return .run
        }
        let line = RunConditionCheck.line(unmet)
        reason = line
        recheckAt = now + interval
        return .wait(reason: line, recheckAt: now + interval)
    }
}
