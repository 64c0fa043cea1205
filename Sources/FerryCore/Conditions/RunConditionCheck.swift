import FerryConfig

/// Whether a folder's run conditions (`when:`) hold, from a reading of the machine: pure
/// logic over values. An empty answer means the folder may run; otherwise each element
/// says, in a few words, what it waits for.
public enum RunConditionCheck {
    public static func unmet(_ conditions: RunConditions, reading: ConditionReading) -> [String] {
        var reasons: [String] = []
        if conditions.needsNetwork {
            switch reading.network {
            case .unmetered?: break
            case .metered?:
                if conditions.network == .unmetered { reasons.append("an unmetered network (the connection is metered)") }
            case .offline?: reasons.append("a network connection (none is up)")
            case let .refused(status)?:
                reasons.append("a suitable network (network_command exited with status \(status))")
            case let .unknown(why)?: reasons.append("a network known to be unmetered (\(why))")
            case nil: reasons.append("a network known to be unmetered (not checked)")
            }
        }
        if conditions.needsPower {
            guard let power = reading.power else {
                reasons.append("a power reading (not checked)")
                return reasons
            }
            if conditions.power == .ac && !power.onMains {
                reasons.append("mains power (on battery)")
            }
            if let minimum = conditions.minBattery, !power.onMains, let percent = power.batteryPercent, percent < minimum {
                reasons.append("the battery to reach \(minimum)% (at \(percent)%)")
            }
        }
        return reasons
    }

    /// The reasons in one line: "waiting for mains power (on battery)".
    public static func line(_ reasons: [String]) -> String {
        "waiting for " + reasons.joined(separator: " and ")
    }
}
