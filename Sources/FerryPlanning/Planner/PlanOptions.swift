/// How a run should treat differences.
public struct PlanOptions: Sendable, Equatable {
    public var mode: SyncMode
    /// Remove files on the target that the source no longer has (`--delete`).
    public var mirror: Bool
    /// Most deletions allowed; nil means `maxDeleteShare` of the target's files.
    public var maxDeletes: Int?
    public var maxDeleteShare: Double
    /// Skip the deletion guard (`--force-delete`).
    public var forceDeletes: Bool
    /// Conflict policies and run names of a two-way sync, and of a pull (which keeps a
    /// differing local file aside under a conflict copy's name); nil for push.
    public var sync: SyncPlanSettings?
    /// When a plan that changes too much is held (`ChangeHold`); nil: never (the deletion
    /// limit above still applies), as with `--accept-changes`.
    public var holds: HoldPolicy?
    /// The folder may delete and replace remote files (`remote_rights` with `delete`).
    /// Without it no remote deletion is planned: a push leaves the remote copy alone, a
    /// sync keeps it remote-only (as the cache budget does), and a conflict renames the
    /// local copy, never the remote one.
    public var mayDeleteRemote = true

    public init(mode: SyncMode, mirror: Bool = false, maxDeletes: Int? = nil, maxDeleteShare: Double = 0.5, forceDeletes: Bool = false,
                sync: SyncPlanSettings? = nil, holds: HoldPolicy? = nil, mayDeleteRemote: Bool = true) {
        self.mode = mode
        self.mayDeleteRemote = mayDeleteRemote
        self.mirror = mirror
        self.maxDeletes = maxDeletes
        self.maxDeleteShare = maxDeleteShare
        self.forceDeletes = forceDeletes
        self.sync = sync
        self.holds = holds
    }
}
