import FerryPluginAPI
import FerrySystem
import Foundation
import GRDB

/// The run history: `history.sqlite` in the state folder, beside the journal but apart
/// from it. The journal is the truth about files and can be moved aside and rebuilt from
/// both sides; the history is a record of what happened, which nothing can rebuild. Kept
/// apart, neither's care (pruning, rebuilding) touches the other, and a run's row is
/// written outside the journal's one writer.
public final class RunHistory: Sendable {
    public static let fileName = "history.sqlite"

    public let path: String
    private let pool: DatabasePool

    private init(path: String, pool: DatabasePool) {
        self.path = path
        self.pool = pool
    }

    /// Closes every connection. The readers go first (`releaseMemory` closes the idle
    /// ones): SQLite checkpoints the write-ahead log and removes it when the last connection
    /// closes, and a reader, opened read-only, cannot. Only its `StateFolder` calls this,
    /// once nothing else uses the store.
    func close() {
        pool.releaseMemory()
        try? pool.close()
    }

    public static func path(in stateDirectory: String) -> String {
        LocalFileSystem.join(stateDirectory, fileName)
    }

    /// Opens (creating if needed) the history of a state folder and migrates it, under an
    /// exclusive lock beside it: a daemon and a manual run may open a new one at once.
    static func open(stateDirectory: String) throws(HistoryError) -> RunHistory {
        let path = path(in: stateDirectory)
        do {
            try LocalFileSystem.makePrivateDirectories(stateDirectory)
        } catch {
            throw HistoryError(message: "cannot create the state folder: \(error.description)")
        }
        // Without the lock (a state folder that cannot hold the file) opening goes on: a
        // race with another opener is then possible, as it always was without one.
        let lock = try? FileLock.exclusive(path + ".open-lock", waits: true)
        defer { withExtendedLifetime(lock) {} }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "ferry.history"
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            try RunHistoryMigrations.migrator.migrate(pool)
            return RunHistory(path: path, pool: pool)
        } catch {
            throw HistoryError(message: "cannot open the run history \(path): \(error)")
        }
    }

    // MARK: Runs

    @discardableResult
    public func append(_ record: RunRecord) async throws(HistoryError) -> Int64 {
        try await write { db in
            try db.execute(sql: """
                INSERT INTO run (folder, mode, localRoot, remote, trigger, startedAt, endedAt, outcome, error, conflicts,
                                 retriedFailures, permanentFailures, resumedBytes, offlineSeconds, peakBytesPerSecond,
                                 journalBytes, trackedFiles)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [record.folder, record.mode, record.localRoot, record.remote, record.trigger.rawValue,
                                 record.startedAt, record.endedAt, record.outcome, record.error, record.conflicts,
                                 record.retriedFailures, record.permanentFailures, record.resumedBytes,
                                 record.offlineSeconds, record.peakBytesPerSecond, record.journalBytes, record.trackedFiles])
            let id = db.lastInsertedRowID
            for moved in record.moved {
                try db.execute(sql: "INSERT INTO runMoved (runId, queue, direction, files, bytes) VALUES (?, ?, ?, ?, ?)",
                               arguments: [id, moved.queue, moved.direction, moved.files, moved.bytes])
            }
            return id
        }
    }

    /// Runs newest first; `folder` and `since` (seconds since 1970, by end) narrow it.
    public func runs(folder: String? = nil, since: Double? = nil, limit: Int = 50) async throws(HistoryError) -> [RunRecord] {
        try await read { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let folder {
                conditions.append("folder = ?")
                _ = arguments.append(contentsOf: [folder])
            }
            if let since {
                conditions.append("endedAt >= ?")
                _ = arguments.append(contentsOf: [since])
            }
            _ = arguments.append(contentsOf: [limit])
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM run \(filter) ORDER BY endedAt DESC, id DESC LIMIT ?",
                                        arguments: arguments)
            return try rows.map { row in
                let id: Int64 = row["id"]
                let moved = try Row.fetchAll(db, sql: "SELECT * FROM runMoved WHERE runId = ? ORDER BY rowid", arguments: [id])
                    .map { RunRecord.Moved(queue: $0["queue"], direction: $0["direction"], files: $0["files"], bytes: $0["bytes"]) }
                var record = RunRecord(folder: row["folder"], mode: row["mode"], localRoot: row["localRoot"], remote: row["remote"],
                                       trigger: RunTrigger(rawValue: row["trigger"]) ?? .manual,
                                       startedAt: row["startedAt"], endedAt: row["endedAt"], outcome: row["outcome"],
                                       error: row["error"],
                                       journalBytes: row["journalBytes"], trackedFiles: row["trackedFiles"])
                record.id = id
                record.moved = moved
                record.conflicts = row["conflicts"]
                record.retriedFailures = row["retriedFailures"]
                record.permanentFailures = row["permanentFailures"]
                record.resumedBytes = row["resumedBytes"]
                record.offlineSeconds = row["offlineSeconds"]
                record.peakBytesPerSecond = row["peakBytesPerSecond"]
                return record
            }
        }
    }

    /// Files and bytes moved per hour (by the end of the run that moved them) since `since`.
    public func hourlyTransfers(since: Double) async throws(HistoryError) -> [HourlyTransfers] {
        try await read { db in
            try Row.fetchAll(db, sql: """
                SELECT CAST(run.endedAt / 3600 AS INTEGER) * 3600 AS hour, runMoved.direction AS direction,
                       SUM(runMoved.files) AS files, SUM(runMoved.bytes) AS bytes
                FROM run JOIN runMoved ON runMoved.runId = run.id
                WHERE run.endedAt >= ? GROUP BY hour, direction ORDER BY hour
                """, arguments: [since]).map {
                HourlyTransfers(hour: $0["hour"], direction: $0["direction"], files: $0["files"], bytes: $0["bytes"])
            }
        }
    }

    /// Removes runs and ended outages older than `before`; returns how many runs went.
    @discardableResult
    public func prune(before: Double) async throws(HistoryError) -> Int {
        try await write { db in
            try db.execute(sql: "DELETE FROM run WHERE endedAt < ?", arguments: [before])
            let removed = db.changesCount
            try db.execute(sql: "DELETE FROM outage WHERE endedAt IS NOT NULL AND endedAt < ?", arguments: [before])
            return removed
        }
    }

    // MARK: Outages

    public func outageBegan(remote: String, at time: Double) async throws(HistoryError) {
        try await write { db in
            let open = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outage WHERE remote = ? AND endedAt IS NULL",
                                        arguments: [remote]) ?? 0
            if open == 0 {
                try db.execute(sql: "INSERT INTO outage (remote, startedAt) VALUES (?, ?)", arguments: [remote, time])
            }
        }
    }

    public func outageEnded(remote: String, at time: Double) async throws(HistoryError) {
        try await write { db in
            try db.execute(sql: "UPDATE outage SET endedAt = ? WHERE remote = ? AND endedAt IS NULL", arguments: [time, remote])
        }
    }

    /// Closes outages a process left open (it stopped or was killed while a remote was
    /// offline): what happened after its last word is not known, so they end at `time`.
    public func closeOpenOutages(at time: Double) async throws(HistoryError) {
        try await write { db in
            try db.execute(sql: "UPDATE outage SET endedAt = MAX(startedAt, ?) WHERE endedAt IS NULL", arguments: [time])
        }
    }

    /// Outages that overlap the time since `since`, oldest first.
    public func outages(since: Double) async throws(HistoryError) -> [OutageRecord] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM outage WHERE endedAt IS NULL OR endedAt >= ? ORDER BY startedAt",
                             arguments: [since]).map {
                OutageRecord(remote: $0["remote"], startedAt: $0["startedAt"], endedAt: $0["endedAt"])
            }
        }
    }

    // MARK: Access

    private func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(HistoryError) -> T {
        do {
            return try await pool.write(body)
        } catch {
            throw HistoryError(message: "cannot write the run history \(path): \(error)")
        }
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(HistoryError) -> T {
        do {
            return try await pool.read(body)
        } catch {
            throw HistoryError(message: "cannot read the run history \(path): \(error)")
        }
    }
}

/// Files and bytes moved in one hour and direction.
public struct HourlyTransfers: Sendable, Equatable, Codable {
    /// The hour's start, seconds since 1970.
    public var hour: Double
    public var direction: String
    public var files: Int
    public var bytes: Int64
}

public struct HistoryError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// The history's schema as named migrations; one that has shipped is never edited.
enum RunHistoryMigrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-runs-moved-and-outages") { db in
            try db.create(table: "run") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("folder", .text).notNull()
                table.column("mode", .text).notNull()
                table.column("localRoot", .text).notNull()
                table.column("remote", .text).notNull()
                table.column("trigger", .text).notNull()
                table.column("startedAt", .double).notNull()
                table.column("endedAt", .double).notNull()
                table.column("outcome", .text).notNull()
                table.column("error", .text)
                table.column("conflicts", .integer).notNull()
                table.column("retriedFailures", .integer).notNull()
                table.column("permanentFailures", .integer).notNull()
                table.column("resumedBytes", .integer).notNull()
                table.column("offlineSeconds", .double).notNull()
                table.column("peakBytesPerSecond", .double).notNull()
                table.column("journalBytes", .integer).notNull()
                table.column("trackedFiles", .integer).notNull()
            }
            try db.create(index: "run_by_end", on: "run", columns: ["endedAt"])
            try db.create(index: "run_by_folder", on: "run", columns: ["folder", "endedAt"])
            try db.create(table: "runMoved") { table in
                table.column("runId", .integer).notNull().references("run", onDelete: .cascade)
                table.column("queue", .text).notNull()
                table.column("direction", .text).notNull()
                table.column("files", .integer).notNull()
                table.column("bytes", .integer).notNull()
            }
            try db.create(index: "runMoved_by_run", on: "runMoved", columns: ["runId"])
            try db.create(table: "outage") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("remote", .text).notNull()
                table.column("startedAt", .double).notNull()
                table.column("endedAt", .double)
            }
        }
        return migrator
    }
}
