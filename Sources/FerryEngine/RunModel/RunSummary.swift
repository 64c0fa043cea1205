import FerryPlanning

/// The totals of one run of one folder pair.
public struct RunSummary: Sendable, Codable, Equatable {
    public struct Failure: Sendable, Codable, Equatable {
        public var path: String
        public var message: String

        public init(path: String, message: String) {
            self.path = path
            self.message = message
        }
    }

    public var folder: String
    public var mode: SyncMode
    public var dryRun: Bool
    public var uploadedFiles = 0
    public var uploadedBytes: Int64 = 0
    public var downloadedFiles = 0
    public var downloadedBytes: Int64 = 0
    public var deletedFiles = 0
    /// Two-way sync: files renamed on the other side instead of sent again.
    public var movedFiles = 0
    /// Two-way sync: conflicts settled by keeping both versions.
    public var keptBothFiles = 0
    /// Deleted or overwritten files moved into a trash folder rather than destroyed.
    public var trashedFiles = 0
    /// Files that needed nothing (already in sync, or found equal on both sides).
    public var skippedFiles = 0
    public var failedFiles = 0
    /// Files the cache budget removed locally after the run (`local_limit:`), and their bytes.
    public var evictedFiles = 0
    public var evictedBytes: Int64 = 0
    /// New remote files the cache budget left on the remote instead of fetching them
    /// (newer files fill `local_limit:`); `ferry pull FOLDER PATH` fetches them.
    public var leftRemoteFiles = 0
    public var conflictFiles = 0
    /// Two-way sync: files another device wrote between this run's listing and its write to
    /// them, decided again instead of overwritten (docs/two-way-sync.md, "Several devices").
    public var changedDuringRun = 0
    /// Bytes that did not have to be sent again because an interrupted transfer resumed.
    public var resumedBytes: Int64 = 0
    public var elapsedSeconds: Double = 0
    public var failures: [Failure] = []
    public var conflicts: [Failure] = []
    /// Files left out because they were still being written (`RunOptions.holdBack`).
    public var heldBack: [String] = []
    /// Why the run may not have seen or done everything although no file failed (a server
    /// that hides names with no catalog to read them from, a catalog that could not be
    /// written): each makes the exit non-zero, so exit 0 always means the data is there.
    public var incomplete: [String] = []
    /// Why the run moved nothing: a run condition (`when:`) that does not hold.
    public var waitingFor: String?
    /// Every file the journal tracks after the run, all folders together (for the run
    /// history); nil when the run did not count them.
    public var trackedFiles: Int?

    public init(folder: String, mode: SyncMode, dryRun: Bool) {
        self.folder = folder
        self.mode = mode
        self.dryRun = dryRun
    }

    public var succeeded: Bool { failedFiles == 0 && conflictFiles == 0 && incomplete.isEmpty }
}
