/// One tracked file of one folder pair: the value the journal keeps a row of.
///
/// Three views of the file live side by side: what the last scan saw locally, what the
/// last listing saw on the remote, and what both sides were when they were last in sync.
/// The planner decides from those; the transfer fields let an interrupted transfer resume.
///
/// A plain value: how it is stored (the `file` table, its columns, GRDB's conformances)
/// is FerryJournal's `Journal/FileRecordRow.swift`, so that planning never sees the database.
public struct FileRecord: Codable, Sendable, Equatable {
    public var pairId: Int64
    /// Path relative to the folder pair's roots, components joined by `/`.
    public var path: String
    public var queue: String
    /// Changed only by the transitions below (`plan`, `beginUpload`, `scheduleRetry`, …):
    /// every rule of the status table in DESIGN.md lives in this file.
    public private(set) var status: FileStatus
    /// The job and its attempts change only by the transitions below too; the setters are
    /// internal for the planner's hypotheticals and for tests.
    public internal(set) var action: FileAction?

    public var localSize: Int64?
    public var localModifiedNanos: Int64?
    public var localInode: Int64?
    public var localHash: String?

    public var remoteSize: Int64?
    public var remoteModifiedNanos: Int64?
    public var remoteETag: String?

    public var syncedLocalSize: Int64?
    public var syncedLocalModifiedNanos: Int64?
    public var syncedLocalInode: Int64?
    /// The local file's status-change time (ctime, nanoseconds) when it was last known in
    /// sync, read right after Ferry's own last write to it; nil when unknown (recorded
    /// without a fresh look at the file, or by a Ferry before this was kept). Size and
    /// modification time survive an edit in place followed by `touch -r`; the ctime does
    /// not, so cache eviction checks it before it removes the only copy of an edit.
    public var syncedLocalChangedNanos: Int64?
    public var syncedRemoteSize: Int64?
    public var syncedRemoteModifiedNanos: Int64?
    public var syncedRemoteETag: String?
    public var syncedAt: Double?

    public internal(set) var attempts: Int
    public internal(set) var nextAttemptAt: Double?
    public internal(set) var lastError: String?

    /// The version of the source that a partial transfer was made from, so that the next
    /// attempt continues it only when the source is still that version.
    public var transferSize: Int64?
    public var transferModifiedNanos: Int64?
    public var transferInode: Int64?
    public var transferETag: String?
    /// The backend's last checkpoint of a partial upload (an S3 multipart upload's id and
    /// acknowledged parts), written as each part finishes; it belongs to `transferLocal`.
    public var transferState: String?

    public var updatedAt: Double

    /// Where a pending move goes (two-way sync): the trash path of a file about to be
    /// deleted or overwritten, the conflict copy's name, or a rename's new path. Decided
    /// when the job is planned, so that a resumed job moves to the same place.
    public var moveTarget: String?
    /// A person's answer to a conflict (`ferry resolve`): applied by the next sync.
    public var resolution: ConflictPolicy?
    /// When the file was last fetched on demand (`ferry pull FOLDER PATH`), in seconds:
    /// the cache budget counts it as at least that recent, so a file just asked for is the
    /// last to be evicted again.
    public var fetchedAt: Double?
    /// The path as the remote's last listing spelled it, when that is another Unicode form
    /// of `path` (NFD on the remote, NFC here): every request to the remote names the file
    /// so (`Planner.remoteSpelling`). Nil when the remote spells it as `path`, or lacks it.
    public var remoteSpelling: String?

    public init(pairId: Int64, path: String, queue: String, status: FileStatus, updatedAt: Double) {
        self.pairId = pairId
        self.path = path
        self.queue = queue
        self.status = status
        self.attempts = 0
        self.updatedAt = updatedAt
    }

    public var local: LocalVersion? {
        get {
            guard let localSize, let localModifiedNanos else { return nil }
            return LocalVersion(size: localSize, modifiedNanos: localModifiedNanos, inode: localInode ?? 0)
        }
        set {
            localSize = newValue?.size
            localModifiedNanos = newValue?.modifiedNanos
            localInode = newValue?.inode
            if newValue == nil { localHash = nil }
        }
    }

    public var remote: RemoteVersion? {
        get {
            guard let remoteSize else { return nil }
            return RemoteVersion(size: remoteSize, modifiedNanos: remoteModifiedNanos, etag: remoteETag)
        }
        set {
            remoteSize = newValue?.size
            remoteModifiedNanos = newValue?.modifiedNanos
            remoteETag = newValue?.etag
        }
    }

    public var syncedLocal: LocalVersion? {
        get {
            guard let syncedLocalSize, let syncedLocalModifiedNanos else { return nil }
            return LocalVersion(size: syncedLocalSize, modifiedNanos: syncedLocalModifiedNanos, inode: syncedLocalInode ?? 0)
        }
        set {
            // Another synced version: the status-change time read for the last one is not its.
            if newValue != syncedLocal { syncedLocalChangedNanos = nil }
            syncedLocalSize = newValue?.size
            syncedLocalModifiedNanos = newValue?.modifiedNanos
            syncedLocalInode = newValue?.inode
        }
    }

    public var syncedRemote: RemoteVersion? {
        get {
            guard let syncedRemoteSize else { return nil }
            return RemoteVersion(size: syncedRemoteSize, modifiedNanos: syncedRemoteModifiedNanos, etag: syncedRemoteETag)
        }
        set {
            syncedRemoteSize = newValue?.size
            syncedRemoteModifiedNanos = newValue?.modifiedNanos
            syncedRemoteETag = newValue?.etag
        }
    }

    /// The local version a partial upload came from.
    public var transferLocal: LocalVersion? {
        get {
            guard let transferSize, let transferModifiedNanos else { return nil }
            return LocalVersion(size: transferSize, modifiedNanos: transferModifiedNanos, inode: transferInode ?? 0)
        }
        set {
            // A checkpoint describes the partial upload of one version only.
            if newValue != transferLocal { transferState = nil }
            transferSize = newValue?.size
            transferModifiedNanos = newValue?.modifiedNanos
            transferInode = newValue?.inode
            transferETag = nil
        }
    }

    /// The remote version a partial download came from.
    public var transferRemote: RemoteVersion? {
        get {
            guard let transferSize else { return nil }
            return RemoteVersion(size: transferSize, modifiedNanos: transferModifiedNanos, etag: transferETag)
        }
        set {
            transferSize = newValue?.size
            transferModifiedNanos = newValue?.modifiedNanos
            transferETag = newValue?.etag
            transferInode = nil
            transferState = nil
        }
    }

    /// The job as the journal's row stored it: for the row mapping only.
    package mutating func restoreJob(action: FileAction?, attempts: Int, nextAttemptAt: Double?, lastError: String?) {
        self.action = action
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
    }

    // MARK: Status transitions (the only place `status` changes)

    /// A job is planned (or planned again): the file waits with the pending status of its
    /// action, with every attempt still ahead of it.
    /// `sameJob`: the file already waited for this very job, whose last error still says
    /// why it waits; a new job starts with none.
    public mutating func plan(_ action: FileAction, sameJob: Bool = true) {
        status = action.pendingStatus
        self.action = action
        attempts = 0
        nextAttemptAt = nil
        if !sameJob { lastError = nil }
    }

    /// The remote changed while this file's job ran, and the job was decided again: the
    /// redecision counts as the job's attempt, and the reason is kept (the count is read
    /// back from it, to stop deciding again and again).
    public mutating func noteRedecision(_ count: Int, reason: String) {
        attempts = count
        lastError = reason
    }

    /// The attempt's connection failed while the remote was going away: the job waits for
    /// it to come back, and its error says the attempt may have got through, so the next
    /// one looks at the target first.
    public mutating func parkAfterLostConnection(error: String?) {
        lastError = error
    }

    /// A local rename was found: this new name's upload is dropped, the MOVE of the old
    /// name brings the file; it waits as a local change with no job of its own.
    public mutating func waitForMove() {
        status = .needsUpload
        action = nil
    }

    /// The planner found both sides as the last sync left them.
    public mutating func confirmInSync() {
        status = .inSync
        action = nil
        clearFailure()
    }

    /// Whether `confirmInSync()` would leave the row as it is: the usual row of a no-op run.
    package var isConfirmedInSync: Bool {
        status == .inSync && action == nil && attempts == 0 && nextAttemptAt == nil && lastError == nil
            && transferSize == nil && transferModifiedNanos == nil && transferInode == nil && transferETag == nil
            && transferState == nil
    }

    /// Both sides hold the same version without the journal knowing it (a first run, a
    /// lost reply): recorded as the synced version.
    public mutating func adoptInSync(at time: Double) {
        status = .inSync
        action = nil
        syncedLocal = local
        syncedRemote = remote
        syncedAt = time
        // A person's answer to a conflict is settled with it (`--keep local` on a pull).
        resolution = nil
        clearFailure()
    }

    /// Both sides changed since the last sync: a policy or a person decides.
    public mutating func markConflict(reason: String) {
        status = .conflict
        action = nil
        moveTarget = nil
        lastError = reason
    }

    /// The bytes differ on the two sides although the journal thought them equal
    /// (`ferry verify --hash`): a conflict whose next sync keeps both.
    public mutating func markContentConflict(reason: String) {
        syncedLocal = nil
        syncedRemote = nil
        syncedAt = nil
        markConflict(reason: reason)
        resolution = .keepBoth
    }

    /// A person answered a conflict (`ferry resolve`): the folder's next run carries it out.
    ///
    /// Keep both gets no job here, only the answer: which side is renamed, and to what, is
    /// planning's decision (`Planner.keepBoth`). A run under way reads its jobs from the
    /// journal a page at a time, so a job written here could be taken by it unplanned: a
    /// placeholder upload sent the local version over the remote one, which was lost (an
    /// answer given through the daemon's API while the folder synced).
    public mutating func resolve(keep resolution: ConflictPolicy, note: String, at time: Double) {
        self.resolution = resolution
        switch resolution {
        case .remote: action = .download
        case .local: action = .upload
        case .keepBoth, .newer, .ask: action = nil
        }
        status = action?.pendingStatus ?? .needsUpload
        lastError = note
        updatedAt = time
    }

    /// A conflict kept both versions and this name's loser was renamed to its conflict
    /// copy: the name starts over (no last sync, no pending move, no answer, no failure)
    /// and waits for `action`, which brings the winning version to the other side.
    public mutating func startOver(waitingFor action: FileAction, at time: Double) {
        syncedLocal = nil
        syncedRemote = nil
        syncedAt = nil
        moveTarget = nil
        resolution = nil
        lastError = nil
        plan(action)
        updatedAt = time
    }

    /// Seen locally, not meant to leave (pull mode, or not yet settled).
    public mutating func keepLocalOnly() {
        status = .localOnly
        action = nil
    }

    /// A large upload starts: marked before any byte moves, with the version its partial
    /// bytes come from, so that an interrupted transfer can be continued.
    public mutating func beginUpload(of version: LocalVersion, at time: Double) {
        status = .uploading
        local = version
        transferLocal = version
        updatedAt = time
    }

    /// A large download starts, marked like an upload with the remote version.
    public mutating func beginDownload(of version: RemoteVersion, at time: Double) {
        status = .downloading
        transferRemote = version
        updatedAt = time
    }

    /// The local file changed while it was being sent: the new version goes again.
    public mutating func changedDuringUpload(to version: LocalVersion) {
        status = .needsUpload
        action = .upload
        local = version
    }

    /// An attempt failed and is tried again not before `notBefore` (wall-clock seconds).
    public mutating func scheduleRetry(action: FileAction, failures: Int, error: String, notBefore: Double, at time: Double) {
        status = action.pendingStatus
        self.action = action
        attempts = failures
        lastError = error
        nextAttemptAt = notBefore
        updatedAt = time
    }

    /// Failed for good: after the last allowed attempt, or at once for a permanent error.
    public mutating func failForGood(failures: Int, error: String, at time: Double) {
        status = .syncError
        attempts = failures
        lastError = error
        nextAttemptAt = nil
        updatedAt = time
    }

    /// Left queued for a later run, its attempts untouched: the backend was offline for
    /// longer than the run waits.
    public mutating func handBack(action: FileAction, error: String, at time: Double) {
        status = action.pendingStatus
        self.action = action
        lastError = error
        nextAttemptAt = nil
        updatedAt = time
    }

    /// `ferry retry`: a failed file gets all its attempts back.
    public mutating func retryAgain(at time: Double) {
        plan(action ?? .upload)
        updatedAt = time
    }

    /// Records a completed transfer: both sides are now these versions, and nothing is
    /// pending, failed or partially transferred. `localChangedNanos` is the local file's
    /// status-change time read with `local`, when it was (`syncedLocalChangedNanos`).
    public mutating func markInSync(local: LocalVersion, remote: RemoteVersion, at time: Double,
                                    localChangedNanos: Int64? = nil) {
        status = .inSync
        action = nil
        self.local = local
        self.remote = remote
        syncedLocal = local
        syncedLocalChangedNanos = localChangedNanos.flatMap { $0 == 0 ? nil : $0 }
        syncedRemote = remote
        syncedAt = time
        attempts = 0
        nextAttemptAt = nil
        lastError = nil
        transferSize = nil
        transferModifiedNanos = nil
        transferInode = nil
        transferETag = nil
        transferState = nil
        moveTarget = nil
        resolution = nil
        updatedAt = time
    }

    /// The cache budget removed the local copy of this in-sync file: the remote holds it,
    /// the local side no longer does, and nothing is pending.
    public mutating func evictLocally(at time: Double) {
        status = .remoteOnly
        action = nil
        local = nil
        fetchedAt = nil
        clearFailure()
        updatedAt = time
    }

    /// The planner found an evicted file still on the remote (maybe at a newer version,
    /// which the record's remote view now shows): it stays remote-only.
    public mutating func keepRemoteOnly() {
        status = .remoteOnly
        action = nil
    }

    /// `ferry pull FOLDER PATH`: an evicted (or never fetched) file is wanted locally again;
    /// it is downloaded by the run and counts as recently used from now.
    public mutating func requestFetch(at time: Double) {
        plan(.download)
        lastError = nil
        fetchedAt = time
        updatedAt = time
    }

    /// Cache eviction found the file with the synced size and modification time but another
    /// status-change time or inode: it may have been edited in place (and its time set
    /// back), so the remote may not hold its bytes. The journal stops vouching for the local
    /// side (`syncedLocal` is dropped, the remote's synced version kept): the next run
    /// compares the two copies (`Planner.lookAlikeDecision`) and, when they differ, takes
    /// the local one for a change since the last sync. `current` is the file as found.
    public mutating func suspectEditInPlace(current: LocalVersion, at time: Double) {
        status = .needsUpload
        action = nil
        local = current
        syncedLocal = nil
        updatedAt = time
    }

    /// Whether the planner should keep this file remote-only: evicted, and not put back
    /// locally since.
    public var isEvicted: Bool { status == .remoteOnly && local == nil }

    /// A new local file's upload, planned and never begun: nothing was ever synced or seen
    /// on the remote under its name, and no attempt, partial transfer or move is recorded.
    public var isUnstartedNewUpload: Bool {
        status == .needsUpload && action == .upload && remote == nil && syncedLocal == nil && syncedRemote == nil
            && transferLocal == nil && transferState == nil && attempts == 0 && moveTarget == nil && resolution == nil
    }

    /// A download asked for by `ferry pull FOLDER PATH` that has not completed: the local
    /// copy's absence is what the fetch fills, never a local deletion.
    public var isFetchOnDemand: Bool {
        fetchedAt != nil && local == nil && status.isPending && action == .download
    }

    private mutating func clearFailure() {
        attempts = 0
        nextAttemptAt = nil
        lastError = nil
        transferLocal = nil
    }

    /// Bytes this file's job moves: the local size for an upload, the remote size for a
    /// download, nothing for a deletion.
    public var transferBytes: Int64 {
        switch action {
        case .upload: return localSize ?? 0
        case .download, .compareContent: return remoteSize ?? 0
        default: return 0
        }
    }
}
