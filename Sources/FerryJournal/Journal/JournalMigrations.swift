import FerryPlanning
import GRDB

/// The journal's schema, as named migrations. A migration that has shipped is never
/// edited: changes come as new migrations appended here.
enum JournalMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-folder-pairs-and-files") { db in
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
        migrator.registerMigration("v2-index-of-pending-jobs") { db in
            // Only rows with a job: a run pages through its jobs per queue in path order
            // (Journal.pendingJobs) without sorting, and in-sync rows cost no index space.
            try db.execute(sql: "CREATE INDEX file_jobs ON file(pairId, queue, path) WHERE action IS NOT NULL")
        }
        // Archive bundles on a pair's remote and which file is in which (docs/archive-bundles.md).
        migrator.registerMigration("archive-bundles-and-members") { db in
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
        // Two-way sync: where a planned move goes, and a person's answer to a conflict.
        migrator.registerMigration("v3-sync-move-target-and-resolution") { db in
            try db.alter(table: "file") { table in
                table.add(column: "moveTarget", .text)
                table.add(column: "resolution", .text)
            }
        }
        // The cache budget: when a file was last fetched on demand (`local_limit:`).
        migrator.registerMigration("v4-cache-fetched-at") { db in
            try db.alter(table: "file") { table in
                table.add(column: "fetchedAt", .double)
            }
        }
        // A push knows its remote from the journal between full listings (`remote_check`).
        migrator.registerMigration("v5-pair-last-listed-at") { db in
            try db.alter(table: "folderPair") { table in
                table.add(column: "lastListedAt", .double)
            }
        }
        // An S3 multipart upload's id and acknowledged parts, recorded as they finish.
        migrator.registerMigration("v6-file-transfer-state") { db in
            try db.alter(table: "file") { table in
                table.add(column: "transferState", .text)
            }
        }
        // Two questions every push asks at its start, which read the whole table without an
        // index (a tenth of a no-op push of 100,000 files): the files with a partial
        // transfer, and the hidden files Ferry put on the remote. Few rows match either, so
        // partial indexes answer them for little space and no write cost on other rows. The
        // queries repeat these conditions word for word, which is how SQLite knows it may
        // use them (`Journal.pathsWithPartialTransfers`, `Journal.catalogEntries`).
        migrator.registerMigration("v7-partial-indexes-for-run-start") { db in
            try db.execute(sql: "CREATE INDEX file_partial_transfers ON file(pairId) WHERE \(FileRecord.hasPartialTransfer)")
            try db.execute(sql: "CREATE INDEX file_hidden ON file(pairId) WHERE \(FileRecord.isHidden)")
        }
        // The queue rules the pair's rows were classified by (`QueueClassifier.rulesText`).
        migrator.registerMigration("v8-pair-queue-rules") { db in
            try db.alter(table: "folderPair") { table in
                table.add(column: "queueRules", .text)
            }
        }
        // When a sync's first run found its remote folder empty (`PairRun.remoteStartedEmpty`).
        migrator.registerMigration("v9-pair-remote-started-empty") { db in
            try db.alter(table: "folderPair") { table in
                table.add(column: "remoteStartedEmptyAt", .double)
            }
        }
        // Change markers (`ChangeMarker`): this pair's own, with the folders it wrote into
        // and has not announced yet, and what it last saw of every other writer's.
        migrator.registerMigration("v10-change-markers") { db in
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
        // The local file's status-change time when it was last known in sync
        // (`FileRecord.syncedLocalChangedNanos`); rows written before have none.
        migrator.registerMigration("v11-synced-local-change-time") { db in
            try db.alter(table: "file") { table in
                table.add(column: "syncedLocalChangedNanos", .integer)
            }
        }
        // The remote's spelling of a name it holds in another Unicode form
        // (`FileRecord.remoteSpelling`); rows written before learn it at the next listing.
        migrator.registerMigration("v12-remote-spelling") { db in
            try db.alter(table: "file") { table in
                table.add(column: "remoteSpelling", .text)
            }
        }
        return migrator
    }
}
