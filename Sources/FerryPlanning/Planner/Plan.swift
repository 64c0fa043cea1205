/// What a run will do: rows to write, rows to forget, and the jobs in priority order.
public struct Plan: Sendable {
    /// Records that differ from the journal and must be written before any job starts.
    public var changedRecords: [FileRecord]
    /// Paths the journal no longer needs to track.
    public var forgottenPaths: [String]
    /// Records with work to do, in the order the scheduler should prefer: queue priority,
    /// then path.
    public var jobs: [FileRecord]
    /// Paths in conflict after this plan.
    public var conflicts: [FileRecord]
    /// Files found in sync (nothing to do).
    public var unchangedCount: Int
    /// Files recognised as already equal on both sides and recorded without a transfer.
    public var adoptedCount: Int
    /// Files present locally (the base of the deletion guard on a pull).
    public var localFileCount: Int = 0
    /// Files whose pending download was given up by this plan (decided otherwise, or gone):
    /// their partial files, if a cut-short attempt left any, are removed.
    public var abandonedDownloads: [String] = []
    /// Remote deletions and replacements resumed after a crash from the version they
    /// planned, with the name now empty (`Planner.resumedDisplacement`): never a rename's
    /// source, since their remote copy may already be in the trash.
    public var resumedDisplacements: [String] = []
    /// The most rows (journal rows, scanned files, remote entries) that one part of a paged
    /// plan held at once: bounded by the page size, whatever the size of the tree.
    public var peakPartRows = 0
    /// Of the unchanged files, those that the quick check settled without reading their
    /// journal rows whole (`QuickCheckRow`).
    public var quickCheckedCount = 0

    public var uploadCount: Int { jobs.count { $0.action == .upload } }
    public var downloadCount: Int { jobs.count { $0.action == .download } }
    public var deletionCount: Int { jobs.count { $0.action == .deleteRemote || $0.action == .deleteLocal } }
    public var uploadBytes: Int64 { jobs.filter { $0.action == .upload }.reduce(0) { $0 + $1.transferBytes } }
    public var downloadBytes: Int64 { jobs.filter { $0.action == .download }.reduce(0) { $0 + $1.transferBytes } }

    /// Made by the planner, or gathered part by part (`PagedPlanning`, starting empty).
    package init(changedRecords: [FileRecord], forgottenPaths: [String], jobs: [FileRecord], conflicts: [FileRecord],
                 unchangedCount: Int, adoptedCount: Int, localFileCount: Int = 0, abandonedDownloads: [String] = [],
                 resumedDisplacements: [String] = []) {
        self.changedRecords = changedRecords
        self.forgottenPaths = forgottenPaths
        self.jobs = jobs
        self.conflicts = conflicts
        self.unchangedCount = unchangedCount
        self.adoptedCount = adoptedCount
        self.localFileCount = localFileCount
        self.abandonedDownloads = abandonedDownloads
        self.resumedDisplacements = resumedDisplacements
    }
}

/// A plan refused as a whole.
public struct PlanError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// Set when the plan is held (too much would change; `ChangeHold`), rather than wrong.
    public var hold: ChangeHold?
    public var description: String { message }

    public init(message: String, hold: ChangeHold? = nil) {
        self.message = message
        self.hold = hold
    }

    public init(hold: ChangeHold) {
        self.init(message: hold.message, hold: hold)
    }
}
