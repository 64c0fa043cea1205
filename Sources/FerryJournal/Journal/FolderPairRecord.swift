import GRDB

/// A local folder paired with a place on a remote; every file row belongs to one.
/// Identified by the local root and the remote's location, not by names, so renaming a
/// folder or remote in config.yml keeps its history.
public struct FolderPairRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "folderPair"

    public var id: Int64?
    /// The folder's name in config.yml, or `ad-hoc`.
    public var name: String
    public var localRoot: String
    /// The backend's display name and the path on it, e.g. `local:/backup/photos`.
    public var remoteLocation: String
    public var lastScanAt: Double?
    public var lastRunAt: Double?
    public var createdAt: Double
    /// When the last complete listing of the remote was taken, by a run that finished: a
    /// push trusts the journal's view of the remote until `remote_check` has passed.
    public var lastListedAt: Double?
    /// The queue rules every row was last classified by, recorded by a run that finished
    /// (`QueueClassifier.rulesText`); nil before the first, or from an older Ferry.
    public var queueRules: String?
    /// When this pair's first sync found the remote folder empty: the hidden names there
    /// can then only be Ferry's own, even before its catalog is written.
    public var remoteStartedEmptyAt: Double?

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

extension FolderPairRecord {
    /// A pair the journal does not hold yet (a configured folder that never ran), for reports.
    public init(name: String, localRoot: String, remoteLocation: String, createdAt: Double) {
        self.init(id: nil, name: name, localRoot: localRoot, remoteLocation: remoteLocation, lastScanAt: nil, lastRunAt: nil,
                  createdAt: createdAt, lastListedAt: nil)
    }
}
