import GRDB

/// One archive bundle on a pair's remote, as the journal knows it: the row that lets a push
/// trust its memory of a bundle's manifest instead of fetching it again.
public struct BundleRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "archiveBundle"

    public var pairId: Int64
    /// The bundle's file name in the remote's bundle folder, e.g. `bundle-20261122T230501Z-3fa2c4d1.tar.zst`.
    public var name: String
    public var format: String
    public var size: Int64
    /// The manifest's size and modification time as last listed or uploaded; a listing that
    /// shows anything else means the manifest changed and is read again.
    public var manifestSize: Int64
    public var manifestModifiedNanos: Int64?
    public var createdAt: Double

    public init(pairId: Int64, name: String, format: String, size: Int64, manifestSize: Int64,
                manifestModifiedNanos: Int64?, createdAt: Double) {
        self.pairId = pairId
        self.name = name
        self.format = format
        self.size = size
        self.manifestSize = manifestSize
        self.manifestModifiedNanos = manifestModifiedNanos
        self.createdAt = createdAt
    }
}

/// One file inside a bundle: which bundle, under which entry name, and the version and
/// content hash it was packed with. `stale` marks a member that left the bundle (its file
/// changed and was sent plain, or was deleted); the bundle's manifest is rewritten without it.
public struct BundleMemberRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "archiveMember"

    public var pairId: Int64
    public var bundle: String
    /// The file's path inside the folder pair.
    public var path: String
    /// The member's name inside the archive.
    public var entryName: String
    public var size: Int64
    public var modifiedNanos: Int64
    /// SHA-256 of the content, lowercase hex.
    public var sha256: String
    public var stale: Bool

    public init(pairId: Int64, bundle: String, path: String, entryName: String, size: Int64, modifiedNanos: Int64,
                sha256: String, stale: Bool) {
        self.pairId = pairId
        self.bundle = bundle
        self.path = path
        self.entryName = entryName
        self.size = size
        self.modifiedNanos = modifiedNanos
        self.sha256 = sha256
        self.stale = stale
    }
}
