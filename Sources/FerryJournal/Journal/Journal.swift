import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation
import GRDB

/// The single source of truth: an SQLite database in WAL mode holding every folder pair and
/// the state of every file. Each job is recorded before it starts and its result after it
/// ends, so a process killed at any instant loses nothing but the work in flight.
///
/// WAL with `synchronous = NORMAL`: a commit survives the process being killed; after a
/// power cut the last commits may roll back, which costs at most a re-check of those files
/// (the planner recognises files already on the other side).
public final class Journal: Sendable {
    public let path: String
    private let pool: DatabasePool

    /// Rows per transaction for bulk writes: large enough that 100k files cost a few dozen
    /// commits, small enough that one transaction does not hold the write lock for long.
    static let batchSize = 5_000

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

    /// Opens (creating if needed) the journal at `path`, creating its folder, and migrates it.
    /// Only `StateFolder` opens a journal; tests of this module open one at any path.
    static func open(at path: String) throws(JournalError) -> Journal {
        do {
            try LocalFileSystem.makePrivateDirectories(LocalFileSystem.parentPath(path))
        } catch {
            throw JournalError(path: path, message: "cannot create the state folder: \(error.description)")
        }
        return try openMigrated(path: path)
    }

    /// Opens the pool (which switches a new database to WAL) and brings the schema up to
    /// date while holding an exclusive lock on a file beside the journal: two runs opening
    /// a new journal at once (folders on different remotes run side by side; a daemon and a
    /// manual push) would otherwise race to switch it to WAL ("busy") and both see no
    /// migration applied and both create the tables.
    private static func openMigrated(path: String) throws(JournalError) -> Journal {
        // Without the lock (a state folder that cannot hold the file) opening goes on: a
        // race with another opener is then possible, as it always was without one.
        let lock = try? FileLock.exclusive(path + ".open-lock", waits: true)
        defer { withExtendedLifetime(lock) {} }
        let journal = try openPool(path: path)
        do {
            let migrator = JournalMigrations.migrator
            let applied = try journal.pool.read(migrator.appliedIdentifiers)
            try migrator.migrate(journal.pool)
            // A table made anew leaves the old one's pages free: the file would stay twice
            // its size, and doctor would report a growing journal. Once, after an upgrade.
            let now = try journal.pool.read(migrator.appliedIdentifiers)
            if !applied.isEmpty, !JournalMigrations.rebuildingTables.isDisjoint(with: now.subtracting(applied)) {
                try journal.pool.vacuum()
            }
        } catch {
            throw JournalError(path: path, message: "cannot prepare the journal: " + describe(error))
        }
        return journal
    }

    private static func openPool(path: String) throws(JournalError) -> Journal {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "ferry.journal"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            return Journal(path: path, pool: try DatabasePool(path: path, configuration: configuration))
        } catch {
            throw JournalError(path: path, message: "cannot open the journal: " + describe(error))
        }
    }

    // MARK: Folder pairs

    /// The pair for this local root and remote location, created on first use (`now`: its
    /// creation time, seconds since 1970).
    public func folderPair(name: String, localRoot: String, remoteLocation: String,
                           at now: Double) async throws(JournalError) -> FolderPairRecord {
        try await write { db in
            if var existing = try FolderPairRecord
                .filter(Column("localRoot") == localRoot && Column("remoteLocation") == remoteLocation)
                .fetchOne(db) {
                if existing.name != name {
                    existing.name = name
                    try existing.update(db)
                }
                return existing
            }
            var record = FolderPairRecord(
                id: nil, name: name, localRoot: localRoot, remoteLocation: remoteLocation,
                lastScanAt: nil, lastRunAt: nil, createdAt: now, lastListedAt: nil)
            try record.insert(db)
            return record
        }
    }

    /// The existing pair for this local root and remote location, if any.
    public func findFolderPair(localRoot: String, remoteLocation: String) async throws(JournalError) -> FolderPairRecord? {
        try await read { db in
            try FolderPairRecord
                .filter(Column("localRoot") == localRoot && Column("remoteLocation") == remoteLocation)
                .fetchOne(db)
        }
    }

    public func folderPairs() async throws(JournalError) -> [FolderPairRecord] {
        try await read { db in try FolderPairRecord.order(Column("id")).fetchAll(db) }
    }

    /// Drops a pair and all that is recorded about it (files, bundles; by the schema's
    /// cascades): `ferry forget`. The files themselves are not touched.
    public func forgetFolderPair(id: Int64) async throws(JournalError) {
        try await write { db in _ = try FolderPairRecord.deleteOne(db, key: id) }
    }

    /// Records that a scan found the local tree as the journal already had it.
    public func confirmScan(pairId: Int64, at time: Double) async throws(JournalError) {
        try await write { db in
            try db.execute(sql: "UPDATE folderPair SET lastScanAt = ? WHERE id = ?", arguments: [time, pairId])
        }
    }

    /// This pair's first sync found its remote folder empty (kept from the first time).
    public func markRemoteStartedEmpty(pairId: Int64, at time: Double) async throws(JournalError) {
        try await write { db in
            try db.execute(sql: "UPDATE folderPair SET remoteStartedEmptyAt = ? WHERE id = ? AND remoteStartedEmptyAt IS NULL",
                           arguments: [time, pairId])
        }
    }

    /// A run finished, having classified every row by `queueRules` (`QueueClassifier.rulesText`).
    public func recordRun(pairId: Int64, at time: Double, queueRules: String) async throws(JournalError) {
        try await write { db in
            try db.execute(sql: "UPDATE folderPair SET lastRunAt = ?, queueRules = ? WHERE id = ?",
                           arguments: [time, queueRules, pairId])
        }
    }

    /// A run that listed the whole remote (at `time`, when the listing began) finished.
    public func recordListing(pairId: Int64, at time: Double) async throws(JournalError) {
        try await write { db in
            try db.execute(sql: "UPDATE folderPair SET lastListedAt = ? WHERE id = ?", arguments: [time, pairId])
        }
    }

    // MARK: Files

    public func records(pairId: Int64) async throws(JournalError) -> [FileRecord] {
        try await read { db in
            try FileRecord.filter(Column("pairId") == pairId).order(Column("path")).fetchAll(db)
        }
    }

    /// Up to `limit` rows of a pair after `path` (nil: from the start), in path order
    /// (SQLite's BINARY: the bytes of the UTF-8 path). Planning reads a large pair this way,
    /// a page at a time, instead of loading every row at once.
    public func records(pairId: Int64, after path: String?, limit: Int) async throws(JournalError) -> [FileRecord] {
        try await read { db in
            if let path {
                try FileRecord.fetchInOrder(db, "WHERE pairId = ? AND path > ? ORDER BY path LIMIT ?", arguments: [pairId, path, limit])
            } else {
                try FileRecord.fetchInOrder(db, "WHERE pairId = ? ORDER BY path LIMIT ?", arguments: [pairId, limit])
            }
        }
    }

    /// Up to `limit` rows of a pair after `path` (nil: from the start), in path order, as
    /// the quick check reads them (`QuickCheckRow`).
    package func quickCheckRows(pairId: Int64, after path: String?, limit: Int) async throws(JournalError) -> [QuickCheckRow] {
        try await read { db in
            let rows = try Row.fetchCursor(db, sql: """
                SELECT \(QuickCheckRow.selectList) FROM file WHERE pairId = ? AND path > ? ORDER BY path LIMIT ?
                """, arguments: [pairId, path ?? "", limit])
            var page: [QuickCheckRow] = []
            while let row = try rows.next() { page.append(QuickCheckRow(row)) }
            return page
        }
    }

    /// The rows of a pair at `paths`, in path order; paths without a row are left out.
    package func records(pairId: Int64, paths: [String]) async throws(JournalError) -> [FileRecord] {
        guard !paths.isEmpty else { return [] }
        return try await read { db in
            var records: [FileRecord] = []
            // Well under SQLite's limit on parameters (32,766 since 3.32).
            for start in stride(from: 0, to: paths.count, by: 500) {
                let chunk = paths[start..<min(start + 500, paths.count)]
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                records += try FileRecord.fetchInOrder(db, "WHERE pairId = ? AND path IN (\(marks)) ORDER BY path",
                                                       arguments: StatementArguments([pairId.databaseValue] + chunk.map(\.databaseValue)))
            }
            return records
        }
    }

    /// Files and bytes of a pair's runnable jobs per queue: what a run is about to do.
    public func pendingJobTotals(pairId: Int64) async throws(JournalError) -> [PendingJobTotal] {
        try await read { db in
            try Row.fetchAll(db, sql: """
                SELECT queue, COUNT(*) AS files,
                       SUM(CASE action WHEN 'upload' THEN COALESCE(localSize, 0)
                                       WHEN 'download' THEN COALESCE(remoteSize, 0) ELSE 0 END) AS bytes
                FROM file WHERE pairId = ? AND action IS NOT NULL AND status IN \(Self.pendingStatusList)
                GROUP BY queue
                """, arguments: [pairId]).map { row in
                PendingJobTotal(queue: row["queue"], files: row["files"], bytes: row["bytes"] ?? 0)
            }
        }
    }

    /// Up to `limit` runnable jobs of one queue after `path` (nil: from the start), in path
    /// order, through the partial index `file_jobs`: the engine takes a run's jobs a page at
    /// a time instead of holding a million of them.
    public func pendingJobs(pairId: Int64, queue: String, after path: String?, limit: Int) async throws(JournalError) -> [FileRecord] {
        try await read { db in
            // Read by position: the decoding by column name was a twentieth of a first push's CPU.
            try FileRecord.fetchInOrder(db, """
                WHERE pairId = ? AND queue = ? AND action IS NOT NULL AND path > ?
                AND status IN \(Self.pendingStatusList) ORDER BY path LIMIT ?
                """, arguments: [pairId, queue, path ?? "", limit])
        }
    }

    private static let pendingStatusList = "(" + FileStatus.allCases.filter(\.isPending).map { "'\($0.rawValue)'" }
        .joined(separator: ", ") + ")"

    /// Paths of a pair with a component starting with `.` (hidden names some servers leave
    /// out of listings).
    public func hiddenPaths(pairId: Int64) async throws(JournalError) -> [String] {
        try await read { db in
            try String.fetchAll(db, sql: "SELECT path FROM file WHERE pairId = ? AND (\(FileRecord.isHidden))",
                                arguments: [pairId])
        }
    }

    public func record(pairId: Int64, path: String) async throws(JournalError) -> FileRecord? {
        try await read { db in
            try FileRecord.filter(Column("pairId") == pairId && Column("path") == path).fetchOne(db)
        }
    }

    /// Writes many rows and removes others, `batchSize` rows per transaction. Callers outside
    /// the journal say why through the named writes (`Journal+FileWrites.swift`).
    func writeRows(_ upserts: [FileRecord], removing deletions: [(pairId: Int64, path: String)]) async throws(JournalError) {
        // Upserts first, then deletions, `batchSize` rows per transaction: a small batch
        // of both (a group of results) is one transaction.
        var upsertStart = 0
        var deletionStart = 0
        while upsertStart < upserts.count || deletionStart < deletions.count {
            let upsertEnd = min(upserts.count, upsertStart + Self.batchSize)
            let deletionEnd = min(deletions.count, deletionStart + Self.batchSize - (upsertEnd - upsertStart))
            let written = Array(upserts[upsertStart..<upsertEnd])
            let removed = deletions[deletionStart..<deletionEnd].map { DeletedRow(pairId: $0.pairId, path: $0.path) }
            try await write { db in
                let upsert = try FileRecord.upsertStatement(db)
                try FileRecord.write(written, with: upsert)
                let statement = try db.cachedStatement(sql: "DELETE FROM file WHERE pairId = ? AND path = ?")
                for row in removed { try statement.execute(arguments: [row.pairId, row.path]) }
            }
            upsertStart = upsertEnd
            deletionStart = deletionEnd
        }
    }

    /// Reads one file's row, hands it to `transition`, and writes it back if the transition
    /// took place (returned true), in one transaction: nothing another writer puts between
    /// the read and the write is lost. Returns the row as written; nil when there is no
    /// such row or the transition did not take place.
    @discardableResult
    public func change(pairId: Int64, path: String,
                       _ transition: @escaping @Sendable (inout FileRecord) -> Bool) async throws(JournalError) -> FileRecord? {
        try await write { db in
            guard var record = try FileRecord.filter(Column("pairId") == pairId && Column("path") == path).fetchOne(db),
                  transition(&record) else { return nil }
            try record.write(db)
            return record
        }
    }

    /// Every file row, of all pairs. SQLite counts the entries of the smallest index
    /// instead of reading the rows, several times faster than `statusCounts` on a large journal.
    public func fileCount() async throws(JournalError) -> Int {
        try await read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM file") ?? 0 }
    }

    /// Whether a file of any pair waits for a transfer: a look into the status index per
    /// pair, where `statusCounts` reads every row (0.3 s at 1,000,000 files, which the
    /// daemon's live item count paid four times a minute while idle).
    public func hasPendingFiles() async throws(JournalError) -> Bool {
        let pending = FileStatus.allCases.filter(\.isPending).map(\.rawValue)
        let marks = pending.map { _ in "?" }.joined(separator: ", ")
        return try await read { db in
            for pairId in try Int64.fetchAll(db, sql: "SELECT id FROM folderPair") {
                let arguments: StatementArguments = [pairId] + StatementArguments(pending)
                if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM file WHERE pairId = ? AND status IN (\(marks)))",
                                     arguments: arguments) == true {
                    return true
                }
            }
            return false
        }
    }

    /// Counts and bytes per queue and status, for one pair or all.
    public func statusCounts(pairId: Int64?) async throws(JournalError) -> [StatusCount] {
        try await read { db in
            let filter = pairId == nil ? "" : "WHERE pairId = ?"
            let arguments: StatementArguments = pairId.map { [$0] } ?? []
            let rows = try Row.fetchAll(db, sql: """
                SELECT pairId, queue, status, COUNT(*) AS files,
                       SUM(COALESCE(localSize, remoteSize, 0)) AS bytes
                FROM file \(filter) GROUP BY pairId, queue, status ORDER BY pairId, queue, status
                """, arguments: arguments)
            return rows.compactMap { row -> StatusCount? in
                guard let status = FileStatus(rawValue: row["status"]) else { return nil }
                return StatusCount(pairId: row["pairId"], queue: row["queue"], status: status,
                                   files: row["files"], bytes: row["bytes"])
            }
        }
    }

    /// Files in a status, for listings of errors and conflicts.
    public func records(pairId: Int64, status: FileStatus) async throws(JournalError) -> [FileRecord] {
        try await records(pairId: pairId, statuses: [status])
    }

    // MARK: Health

    /// What SQLite's own checks find wrong: `PRAGMA integrity_check` (every page, index and
    /// constraint; `quick: true` runs the cheaper `quick_check`, which skips index contents)
    /// and `PRAGMA foreign_key_check`. Empty when the journal is sound.
    public func integrityProblems(quick: Bool = false) async throws(JournalError) -> [String] {
        try await read { db in
            let check = quick ? "quick_check" : "integrity_check"
            var problems = try String.fetchAll(db, sql: "PRAGMA \(check)(100)").filter { $0 != "ok" }
            for row in try Row.fetchAll(db, sql: "PRAGMA foreign_key_check") {
                problems.append("row \(row[1] as Int64? ?? 0) of \(row[0] as String? ?? "?") points at a missing \(row[2] as String? ?? "?")")
            }
            return problems
        }
    }

    /// Files of a pair in any of these statuses, by path.
    public func records(pairId: Int64, statuses: [FileStatus]) async throws(JournalError) -> [FileRecord] {
        try await read { db in
            try FileRecord.filter(Column("pairId") == pairId && statuses.map(\.rawValue).contains(Column("status")))
                .order(Column("path")).fetchAll(db)
        }
    }

    /// Makes failed files (`syncError`) of a pair runnable again: their job goes back to
    /// pending with a fresh count of attempts and no waiting time. `paths` nil means every
    /// failed file; a path that names a folder takes the failed files below it. Returns the
    /// paths reset. `now`: seconds since 1970.
    public func retryFailed(pairId: Int64, paths: [String]?, at now: Double) async throws(JournalError) -> [String] {
        try await write { db in
            var reset: [String] = []
            let failed = try FileRecord.filter(Column("pairId") == pairId && Column("status") == FileStatus.syncError.rawValue)
                .order(Column("path")).fetchAll(db)
            for var record in failed {
                if let paths, !paths.contains(where: { record.path == $0 || record.path.hasPrefix($0 + "/") || $0.isEmpty }) {
                    continue
                }
                record.retryAgain(at: now)
                try record.write(db)
                reset.append(record.path)
            }
            return reset
        }
    }

    /// Records a person's answer to the conflicts of a pair at `path` (a file, or a folder
    /// for every conflict below it; empty for all): the folder's next run (a sync, or a
    /// pull or push as far as its direction allows) settles them that way.
    /// The rows leave `conflict` for the pending status of the side that wins. Returns the
    /// paths answered.
    public func resolveConflicts(pairId: Int64, path: String, keep resolution: ConflictPolicy,
                                 at time: Double) async throws(JournalError) -> [String] {
        try await write { db in
            var resolved: [String] = []
            let conflicts = try FileRecord.filter(Column("pairId") == pairId && Column("status") == FileStatus.conflict.rawValue)
                .order(Column("path")).fetchAll(db)
            for var record in conflicts where path.isEmpty || record.path == path || record.path.hasPrefix(path + "/") {
                record.resolve(keep: resolution, note: "resolved: keep \(resolution == .keepBoth ? "both" : resolution.rawValue); "
                               + "the folder's next run carries it out", at: time)
                try record.write(db)
                resolved.append(record.path)
            }
            return resolved
        }
    }

    // MARK: Access

    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(JournalError) -> T {
        do {
            return try await pool.write(body)
        } catch {
            throw JournalError(path: path, message: Self.describe(error), stopped: Self.isStop(error))
        }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(JournalError) -> T {
        do {
            return try await pool.read(body)
        } catch {
            throw JournalError(path: path, message: Self.describe(error), stopped: Self.isStop(error))
        }
    }

    /// The access was given up because the task was cancelled (Ctrl-C, a daemon stopping):
    /// GRDB throws CancellationError before it starts, and interrupts a statement under way.
    private static func isStop(_ error: any Error) -> Bool {
        error is CancellationError || (error as? DatabaseError)?.resultCode == .SQLITE_INTERRUPT
    }

    private static func describe(_ error: any Error) -> String {
        if error is CancellationError { return "stopped before the journal was read or written" }
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_FULL: return "disk full while writing the journal; free some space and run again"
            case .SQLITE_BUSY, .SQLITE_LOCKED: return "the journal is busy (another Ferry process?); try again"
            case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN:
                return "cannot write the journal; check the permissions of the state folder"
            case .SQLITE_CORRUPT, .SQLITE_NOTADB:
                return "the journal is damaged; move it aside and run again to rebuild it from both sides"
            default: return error.message ?? "\(error)"
            }
        }
        return "\(error)"
    }
}

private struct DeletedRow: Sendable {
    var pairId: Int64
    var path: String
}

/// Files and bytes in one queue and status.
public struct StatusCount: Sendable, Equatable, Codable {
    public var pairId: Int64
    public var queue: String
    public var status: FileStatus
    public var files: Int
    public var bytes: Int64
}

/// Runnable jobs of one queue: how many, and how many bytes they move.
public struct PendingJobTotal: Sendable, Equatable {
    public var queue: String
    public var files: Int
    public var bytes: Int64

    /// Also the engine's, for the jobs of a list it was handed instead of the journal's.
    package init(queue: String, files: Int, bytes: Int64) {
        self.queue = queue
        self.files = files
        self.bytes = bytes
    }
}

/// A journal that cannot be opened, read or written.
public struct JournalError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String
    /// Given up because the run was stopped, not because the journal failed.
    public var stopped = false
    public var description: String { "journal \(path): \(message)" }
}
