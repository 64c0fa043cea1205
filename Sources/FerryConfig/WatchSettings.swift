/// How `ferry watch` and `ferry daemon` watch folders (`watch:` in config.yml).
public struct WatchSettings: Sendable, Equatable {
    /// A changed file is sent once nothing happened to it for this long (and its writer
    /// closed it, where that is seen).
    public var quietPeriod: Duration = .seconds(3)
    /// A full rescan of every watched folder this often, as a safety net for anything the
    /// events missed.
    public var rescanInterval: Duration = .seconds(3600)
    /// How often a folder in pull mode asks the remote whether something changed.
    public var pollInterval: Duration = .seconds(300)
    /// On SIGTERM/SIGINT, how long transfers get to stop at a resumable point before the
    /// process exits anyway.
    public var stopTimeout: Duration = .seconds(10)
    /// How often a folder whose run conditions (`when:`) do not hold checks them again.
    public var conditionInterval: Duration = .seconds(60)

    public init() {}
}

/// Bandwidth limits that change by time of day (`bandwidth:` in config.yml), applied by the
/// daemon and by `watch` on top of `transfers.bandwidth`.
public struct BandwidthSettings: Sendable, Equatable {
    /// All transfers of the process together.
    public var all: BandwidthTimetable?
    /// Per remote name: all transfers to or from it, over every folder.
    public var remotes: [String: BandwidthTimetable] = [:]
    /// Per queue name, over every folder.
    public var queues: [String: BandwidthTimetable] = [:]

    public init() {}

    public var isEmpty: Bool { all == nil && remotes.isEmpty && queues.isEmpty }
}
