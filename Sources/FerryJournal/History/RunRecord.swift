/// One run in the history (`history.sqlite`): when, why, what moved, what went wrong.
public struct RunRecord: Sendable, Equatable, Codable {
    /// Files and bytes moved in one queue and direction.
    public struct Moved: Sendable, Equatable, Codable {
        public var queue: String
        /// `upload`, `download`, `delete-remote` or `delete-local`.
        public var direction: String
        public var files = 0
        public var bytes: Int64 = 0

        public init(queue: String, direction: String, files: Int = 0, bytes: Int64 = 0) {
            self.queue = queue
            self.direction = direction
            self.files = files
            self.bytes = bytes
        }
    }

    public var id: Int64?
    public var folder: String
    public var mode: String
    public var localRoot: String
    /// The remote's location (backend and path), as the journal names the pair.
    public var remote: String
    public var trigger: RunTrigger
    public var startedAt: Double
    public var endedAt: Double
    /// `ok`, `failed` (some files failed or are in conflict), `error` (the run could not
    /// happen: lock, listing, configuration), `stopped` (interrupted at a resumable point).
    public var outcome: String
    public var error: String?
    public var moved: [Moved]
    public var conflicts: Int
    public var retriedFailures: Int
    public var permanentFailures: Int
    public var resumedBytes: Int64
    public var offlineSeconds: Double
    public var peakBytesPerSecond: Double
    /// The journal's size on disk (with its WAL) and the pair's tracked files at the end.
    public var journalBytes: Int64
    public var trackedFiles: Int

    /// A run's record with its figures given one by one; FerryCore's `RunRecord+Tally`
    /// takes them from a run's `RunTally`.
    public init(folder: String, mode: String, localRoot: String, remote: String, trigger: RunTrigger,
                startedAt: Double, endedAt: Double, outcome: String, error: String? = nil,
                moved: [Moved] = [], conflicts: Int = 0, retriedFailures: Int = 0, permanentFailures: Int = 0,
                resumedBytes: Int64 = 0, offlineSeconds: Double = 0, peakBytesPerSecond: Double = 0,
                journalBytes: Int64 = 0, trackedFiles: Int = 0) {
        self.folder = folder
        self.mode = mode
        self.localRoot = localRoot
        self.remote = remote
        self.trigger = trigger
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.outcome = outcome
        self.error = error
        self.moved = moved
        self.conflicts = conflicts
        self.retriedFailures = retriedFailures
        self.permanentFailures = permanentFailures
        self.resumedBytes = resumedBytes
        self.offlineSeconds = offlineSeconds
        self.peakBytesPerSecond = peakBytesPerSecond
        self.journalBytes = journalBytes
        self.trackedFiles = trackedFiles
    }

    public var files: Int { moved.reduce(0) { $0 + $1.files } }
    public var bytes: Int64 { moved.reduce(0) { $0 + $1.bytes } }
}

/// A time a remote did not answer, as the daemon saw it; `endedAt` nil while it lasts.
public struct OutageRecord: Sendable, Equatable, Codable {
    public var remote: String
    public var startedAt: Double
    public var endedAt: Double?

    public init(remote: String, startedAt: Double, endedAt: Double? = nil) {
        self.remote = remote
        self.startedAt = startedAt
        self.endedAt = endedAt
    }
}
