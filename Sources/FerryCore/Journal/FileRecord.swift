import GRDB

/// One tracked file of one folder pair: the journal's row.
///
/// Three views of the file live side by side: what the last scan saw locally, what the
/// last listing saw on the remote, and what both sides were when they were last in sync.
/// The planner decides from those; the transfer fields let an interrupted transfer resume.
public struct FileRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "file"

    public var pairId: Int64
    /// Path relative to the folder pair's roots, components joined by `/`.
    public var path: String
    public var queue: String
    public var status: FileStatus
    public var action: FileAction?

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
    public var syncedRemoteSize: Int64?
    public var syncedRemoteModifiedNanos: Int64?
    public var syncedRemoteETag: String?
    public var syncedAt: Double?

    public var attempts: Int
    public var nextAttemptAt: Double?
    public var lastError: String?

    /// The version of the source that a partial transfer was made from, so that the next
    /// attempt continues it only when the source is still that version.
    public var transferSize: Int64?
    public var transferModifiedNanos: Int64?
    public var transferInode: Int64?
    public var transferETag: String?

    public var updatedAt: Double

    /// Where a pending move goes (two-way sync): the trash path of a file about to be
    /// deleted or overwritten, the conflict copy's name, or a rename's new path. Decided
    /// when the job is planned, so that a resumed job moves to the same place.
    public var moveTarget: String?
    /// A person's answer to a conflict (`ferry resolve`): applied by the next sync.
    public var resolution: ConflictPolicy?

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
        }
    }

    /// Records a completed transfer: both sides are now these versions, and nothing is
    /// pending, failed or partially transferred.
    public mutating func markInSync(local: LocalVersion, remote: RemoteVersion, at time: Double) {
        status = .inSync
        action = nil
        self.local = local
        self.remote = remote
        syncedLocal = local
        syncedRemote = remote
        syncedAt = time
        attempts = 0
        nextAttemptAt = nil
        lastError = nil
        transferSize = nil
        transferModifiedNanos = nil
        transferInode = nil
        transferETag = nil
        moveTarget = nil
        resolution = nil
        updatedAt = time
    }

    /// Bytes this file's job moves: the local size for an upload, the remote size for a
    /// download, nothing for a deletion.
    public var transferBytes: Int64 {
        switch action {
        case .upload: return localSize ?? 0
        case .download: return remoteSize ?? 0
        default: return 0
        }
    }
}
