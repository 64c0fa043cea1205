import FerryPlanning
import GRDB

/// The journal's schema, as named migrations. A migration that has shipped is never
/// edited: changes come as new migrations appended to `all`.
enum JournalMigrations {
    /// Every migration in the order it shipped; the names are what the journal records.
    static let all: [(name: String, migrate: @Sendable (Database) throws -> Void)] = [
        ("v1-folder-pairs-and-files", v1FolderPairsAndFiles),
        ("v2-index-of-pending-jobs", v2IndexOfPendingJobs),
        ("archive-bundles-and-members", archiveBundlesAndMembers),
        ("v3-sync-move-target-and-resolution", v3SyncMoveTargetAndResolution),
        ("v4-cache-fetched-at", v4CacheFetchedAt),
        ("v5-pair-last-listed-at", v5PairLastListedAt),
        ("v6-file-transfer-state", v6FileTransferState),
        ("v7-partial-indexes-for-run-start", v7PartialIndexesForRunStart),
        ("v8-pair-queue-rules", v8PairQueueRules),
        ("v9-pair-remote-started-empty", v9PairRemoteStartedEmpty),
        ("v10-change-markers", v10ChangeMarkers),
        ("v11-synced-local-change-time", v11SyncedLocalChangeTime),
        ("v12-remote-spelling", v12RemoteSpelling),
    ]

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in all { migrator.registerMigration(migration.name, migrate: migration.migrate) }
        return migrator
    }

    private static func v1FolderPairsAndFiles(_ db: Database) throws {
        try db.create(table: "folderPair") { table in
            table.autoIncrementedPrimaryKey("id")
            table.column("name", .text).notNull()
            table.column("localRoot", .text).notNull()
            table.column("remoteLocation", .text).notNull()
            table.column("lastScanAt", .double)
            table.column("lastRunAt", .double)
            table.column("createdAt", .double).notNull()
            table.uniqueKey(["localRoot", "remoteLocation"])
        }
        try db.create(table: "file") { table in
            table.column("pairId", .integer).notNull().references("folderPair", onDelete: .cascade)
            table.column("path", .text).notNull()
            table.column("queue", .text).notNull()
            table.column("status", .text).notNull()
            table.column("action", .text)
            table.column("localSize", .integer)
            table.column("localModifiedNanos", .integer)
            table.column("localInode", .integer)
            table.column("localHash", .text)
            table.column("remoteSize", .integer)
            table.column("remoteModifiedNanos", .integer)
            table.column("remoteETag", .text)
            table.column("syncedLocalSize", .integer)
            table.column("syncedLocalModifiedNanos", .integer)
            table.column("syncedLocalInode", .integer)
            table.column("syncedRemoteSize", .integer)
            table.column("syncedRemoteModifiedNanos", .integer)
            table.column("syncedRemoteETag", .text)
            table.column("syncedAt", .double)
            table.column("attempts", .integer).notNull().defaults(to: 0)
            table.column("nextAttemptAt", .double)
            table.column("lastError", .text)
            table.column("transferSize", .integer)
            table.column("transferModifiedNanos", .integer)
            table.column("transferInode", .integer)
            table.column("transferETag", .text)
            table.column("updatedAt", .double).notNull()
            table.primaryKey(["pairId", "path"])
        }
        try db.create(index: "file_by_status", on: "file", columns: ["pairId", "status", "queue"])
    }

    private static func v2IndexOfPendingJobs(_ db: Database) throws {
        // Only rows with a job: a run pages through its jobs per queue in path order
        // (Journal.pendingJobs) without sorting, and in-sync rows cost no index space.
        try db.execute(sql: "CREATE INDEX file_jobs ON file(pairId, queue, path) WHERE action IS NOT NULL")
    }

    /// Archive bundles on a pair's remote and which file is in which (docs/archive-bundles.md).
    private static func archiveBundlesAndMembers(_ db: Database) throws {
        try db.create(table: "archiveBundle") { table in
            table.column("pairId", .integer).notNull().references("folderPair", onDelete: .cascade)
            table.column("name", .text).notNull()
            table.column("format", .text).notNull()
            table.column("size", .integer).notNull()
            table.column("manifestSize", .integer).notNull()
            table.column("manifestModifiedNanos", .integer)
            table.column("createdAt", .double).notNull()
            table.primaryKey(["pairId", "name"])
        }
        try db.create(table: "archiveMember") { table in
            table.column("pairId", .integer).notNull()
            table.column("bundle", .text).notNull()
            table.column("path", .text).notNull()
            table.column("entryName", .text).notNull()
            table.column("size", .integer).notNull()
            table.column("modifiedNanos", .integer).notNull()
            table.column("sha256", .text).notNull()
            table.column("stale", .boolean).notNull().defaults(to: false)
            table.primaryKey(["pairId", "bundle", "path"])
            table.foreignKey(["pairId", "bundle"], references: "archiveBundle", columns: ["pairId", "name"], onDelete: .cascade)
        }
        try db.create(index: "archiveMember_by_path", on: "archiveMember", columns: ["pairId", "path"])
    }

    /// Two-way sync: where a planned move goes, and a person's answer to a conflict.
    private static func v3SyncMoveTargetAndResolution(_ db: Database) throws {
        try db.alter(table: "file") { table in
            table.add(column: "moveTarget", .text)
            table.add(column: "resolution", .text)
        }
    }

    /// The cache budget: when a file was last fetched on demand (`local_limit:`).
    private static func v4CacheFetchedAt(_ db: Database) throws {
        try db.alter(table: "file") { table in
            table.add(column: "fetchedAt", .double)
        }
    }

    /// A push knows its remote from the journal between full listings (`remote_check`).
    private static func v5PairLastListedAt(_ db: Database) throws {
        try db.alter(table: "folderPair") { table in
            table.add(column: "lastListedAt", .double)
        }
    }

    /// An S3 multipart upload's id and acknowledged parts, recorded as they finish.
    private static func v6FileTransferState(_ db: Database) throws {
        try db.alter(table: "file") { table in
            table.add(column: "transferState", .text)
        }
    }

    /// Two questions every push asks at its start, which read the whole table without an
    /// index (a tenth of a no-op push of 100,000 files): the files with a partial
    /// transfer, and the hidden files Ferry put on the remote. Few rows match either, so
    /// partial indexes answer them for little space and no write cost on other rows. The
    /// queries repeat these conditions word for word, which is how SQLite knows it may
    /// use them (`Journal.pathsWithPartialTransfers`, `Journal.catalogEntries`).
    private static func v7PartialIndexesForRunStart(_ db: Database) throws {
        try db.execute(sql: "CREATE INDEX file_partial_transfers ON file(pairId) WHERE \(FileRecord.hasPartialTransfer)")
        try db.execute(sql: "CREATE INDEX file_hidden ON file(pairId) WHERE \(FileRecord.isHidden)")
    }

    /// The queue rules the pair's rows were classified by (`QueueClassifier.rulesText`).
    private static func v8PairQueueRules(_ db: Database) throws {
        try db.alter(table: "folderPair") { table in
            table.add(column: "queueRules", .text)
        }
    }

    /// When a sync's first run found its remote folder empty (`PairRun.remoteStartedEmpty`).
    private static func v9PairRemoteStartedEmpty(_ db: Database) throws {
        try db.alter(table: "folderPair") { table in
            table.add(column: "remoteStartedEmptyAt", .double)
        }
    }

    /// Change markers (`ChangeMarker`): this pair's own, with the folders it wrote into
    /// and has not announced yet, and what it last saw of every other writer's.
    private static func v10ChangeMarkers(_ db: Database) throws {
        try db.create(table: "ownChangeMarker") { table in
            table.primaryKey("pairId", .integer).references("folderPair", onDelete: .cascade)
            table.column("marker", .text)
            table.column("pending", .text)
        }
        try db.create(table: "seenChangeMarker") { table in
            table.column("pairId", .integer).notNull().references("folderPair", onDelete: .cascade)
            table.column("writer", .text).notNull()
            table.column("seq", .integer).notNull()
            table.column("device", .text).notNull()
            table.column("changedAt", .double).notNull()
            table.primaryKey(["pairId", "writer"])
        }
    }

    /// The local file's status-change time when it was last known in sync
    /// (`FileRecord.syncedLocalChangedNanos`); rows written before have none.
    private static func v11SyncedLocalChangeTime(_ db: Database) throws {
        try db.alter(table: "file") { table in
            table.add(column: "syncedLocalChangedNanos", .integer)
        }
    }

    /// The remote's spelling of a name it holds in another Unicode form
    /// (`FileRecord.remoteSpelling`); rows written before learn it at the next listing.
    private static func v12RemoteSpelling(_ db: Database) throws {
        try db.alter(table: "file") { table in
            table.add(column: "remoteSpelling", .text)
        }
    }
}
