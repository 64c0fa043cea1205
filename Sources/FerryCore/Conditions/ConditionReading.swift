/// What the machine's network and power supply are right now, as `SystemConditionProbe`
/// read them: the values `RunConditionCheck` decides from.
public struct ConditionReading: Sendable, Equatable {
    public enum Network: Sendable, Equatable {
        case unmetered
        case metered
        /// No connection is up.
        case offline
        /// `network_command` exited non-zero (its status).
        case refused(status: Int32)
        /// Neither NetworkManager nor a `network_command` could say (why).
        case unknown(String)
    }

    public struct Power: Sendable, Equatable {
        /// On mains power: a mains or USB supply online, a battery charging or full, or no
        /// battery at all (a desktop).
        public var onMains: Bool
        /// The batteries' mean charge, nil without a battery.
        public var batteryPercent: Int?

        public init(onMains: Bool, batteryPercent: Int?) {
            self.onMains = onMains
            self.batteryPercent = batteryPercent
        }
    }

    /// nil when the conditions need no network check.
    public var network: Network?
    /// nil when the conditions need no power reading.
    public var power: Power?

    public init(network: Network? = nil, power: Power? = nil) {
        self.network = network
        self.power = power
    }
}
