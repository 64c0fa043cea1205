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
        ("v13-stored-settled-flag", v13StoredSettledFlag),
    ]

    /// The migrations that make a table anew; a journal is vacuumed after them.
    static let rebuildingTables: Set<String> = ["v13-stored-settled-flag"]

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

    /// Whether a row is settled (`QuickCheckRow`), stored with the row. A no-op push reads
    /// the flag of every row; evaluating the condition there was 13% of its CPU at
    /// 200,000 files. Stored, SQLite computes it once per write, whichever statement writes
    /// the row, so it cannot disagree with the columns. A partial index of unsettled rows
    /// answered the same question but made a first push of 1,000,000 files 25% slower: each
    /// row entered the index when planned and left it when booked (docs/benchmarks.md).
    ///
    /// SQLite adds only virtual generated columns to a table, so the table is made anew
    /// with the flag, its rows copied, and its indexes made again (GRDB runs a migration
    /// with foreign keys checked at its end, as SQLite's procedure for this asks).
    private static func v13StoredSettledFlag(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE file_v13 (
              pairId INTEGER NOT NULL REFERENCES folderPair(id) ON DELETE CASCADE,
              path TEXT NOT NULL, queue TEXT NOT NULL, status TEXT NOT NULL, action TEXT,
              localSize INTEGER, localModifiedNanos INTEGER, localInode INTEGER, localHash TEXT,
              remoteSize INTEGER, remoteModifiedNanos INTEGER, remoteETag TEXT,
              syncedLocalSize INTEGER, syncedLocalModifiedNanos INTEGER, syncedLocalInode INTEGER,
              syncedRemoteSize INTEGER, syncedRemoteModifiedNanos INTEGER, syncedRemoteETag TEXT, syncedAt DOUBLE,
              attempts INTEGER NOT NULL DEFAULT 0, nextAttemptAt DOUBLE, lastError TEXT,
              transferSize INTEGER, transferModifiedNanos INTEGER, transferInode INTEGER, transferETag TEXT,
              updatedAt DOUBLE NOT NULL,
              moveTarget TEXT, resolution TEXT, fetchedAt DOUBLE, transferState TEXT,
              syncedLocalChangedNanos INTEGER, remoteSpelling TEXT,
              settled INTEGER NOT NULL GENERATED ALWAYS AS (IFNULL((\(v13SettledCondition)), 0)) STORED,
              PRIMARY KEY (pairId, path)
            )
            """)
        let columns = """
            pairId, path, queue, status, action, localSize, localModifiedNanos, localInode, localHash, \
            remoteSize, remoteModifiedNanos, remoteETag, syncedLocalSize, syncedLocalModifiedNanos, syncedLocalInode, \
            syncedRemoteSize, syncedRemoteModifiedNanos, syncedRemoteETag, syncedAt, attempts, nextAttemptAt, lastError, \
            transferSize, transferModifiedNanos, transferInode, transferETag, updatedAt, \
            moveTarget, resolution, fetchedAt, transferState, syncedLocalChangedNanos, remoteSpelling
            """
        try db.execute(sql: "INSERT INTO file_v13 (\(columns)) SELECT \(columns) FROM file")
        try db.execute(sql: "DROP TABLE file")
        try db.execute(sql: "ALTER TABLE file_v13 RENAME TO file")
        try db.create(index: "file_by_status", on: "file", columns: ["pairId", "status", "queue"])
        try db.execute(sql: "CREATE INDEX file_jobs ON file(pairId, queue, path) WHERE action IS NOT NULL")
        try db.execute(sql: "CREATE INDEX file_partial_transfers ON file(pairId) WHERE \(FileRecord.hasPartialTransfer)")
        try db.execute(sql: "CREATE INDEX file_hidden ON file(pairId) WHERE \(FileRecord.isHidden)")
    }

    /// The settled condition as v13 stores it, written out here because a shipped
    /// migration does not change: the row is in sync with nothing pending, failed or
    /// half-transferred (`FileRecord.isConfirmedInSync`), and both sides are at the versions
    /// last synced, so that `Planner.decide` answers `.inSync` for a push. Stricter than
    /// those where that is simpler (the remote versions compared field by field rather than
    /// by `isSameVersion`; no move, answer or fetch noted): a row it leaves out is only
    /// planned the long way. A comparison with NULL is NULL in SQL, and so can the whole
    /// condition be: that is not settled either.
    static let v13SettledCondition = """
        status = 'inSync' AND action IS NULL AND attempts = 0 AND nextAttemptAt IS NULL \
        AND lastError IS NULL AND transferSize IS NULL AND transferModifiedNanos IS NULL \
        AND transferInode IS NULL AND transferETag IS NULL AND transferState IS NULL \
        AND moveTarget IS NULL AND resolution IS NULL AND fetchedAt IS NULL \
        AND localSize IS NOT NULL AND localModifiedNanos IS NOT NULL \
        AND syncedLocalSize = localSize AND syncedLocalModifiedNanos = localModifiedNanos \
        AND remoteSize IS NOT NULL AND syncedRemoteSize = remoteSize \
        AND syncedRemoteModifiedNanos IS remoteModifiedNanos AND syncedRemoteETag IS remoteETag
        """
}
