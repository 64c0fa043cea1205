/// A folder's run conditions (`when:`): runs of the folder wait while one does not hold.
public struct RunConditions: Sendable, Equatable {
    /// What the network must be.
    public enum Network: String, Sendable, CaseIterable {
        /// Any connection will do (the default).
        case any
        /// Not a metered connection (a phone's hotspot, a cellular modem).
        case unmetered
    }

    /// What the power supply must be.
    public enum Power: String, Sendable, CaseIterable {
        /// On battery or on mains (the default).
        case any
        /// On mains power (a charger plugged in).
        case ac
    }

    public var network: Network = .any
    /// A command that exits 0 when the network is suitable, run with `/bin/sh -c`; used
    /// instead of NetworkManager's metered state when set.
    public var networkCommand: String?
    public var power: Power = .any
    /// Least battery charge (percent) to run on battery; nil for none. On mains power the
    /// charge does not matter.
    public var minBattery: Int?

    public init(network: Network = .any, networkCommand: String? = nil, power: Power = .any, minBattery: Int? = nil) {
        self.network = network
        self.networkCommand = networkCommand
        self.power = power
        self.minBattery = minBattery
    }

    /// No condition at all: the folder always runs.
    public var isEmpty: Bool { !needsNetwork && !needsPower }

    /// Whether the network must be checked: `network: unmetered`, or a command that says.
    public var needsNetwork: Bool { network != .any || networkCommand != nil }
    /// Whether the power supply must be read.
    public var needsPower: Bool { power != .any || minBattery != nil }
}
