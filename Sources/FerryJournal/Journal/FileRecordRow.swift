import FerryPlanning
import GRDB

// The journal's view of the planner's values: `FileRecord` is a row of the `file` table,
// its status, action and conflict answer are text columns. The conformances are declared
// here, apart from the types, so that FerryPlanning never imports GRDB. They are
// retroactive (both the types and GRDB's protocols come from other modules) yet safe:
// FerryJournal owns the journal and FerryPlanning is of the same package, so no other
// module declares them. Swift does not warn within one package, hence no @retroactive.
extension FileRecord: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "file"
}

extension FileStatus: DatabaseValueConvertible {}
extension FileAction: DatabaseValueConvertible {}
extension ConflictPolicy: DatabaseValueConvertible {}

/// How a `FileRecord` is written and read in bulk: one column list, in table order, that
/// the prepared upsert statement, GRDB's persistence container and the paged reads use.
///
/// GRDB's generic `upsert` builds its SQL anew for every row and encodes through
/// `Codable`; a profile of a 2,000-file push put 20% of the process's CPU there. A cached
/// statement with explicit arguments does the same write for a fraction of that.
extension FileRecord {
    static let columnNames: [String] = [
        "pairId", "path", "queue", "status", "action",
        "localSize", "localModifiedNanos", "localInode", "localHash",
        "remoteSize", "remoteModifiedNanos", "remoteETag",
        "syncedLocalSize", "syncedLocalModifiedNanos", "syncedLocalInode",
        "syncedRemoteSize", "syncedRemoteModifiedNanos", "syncedRemoteETag", "syncedAt",
        "attempts", "nextAttemptAt", "lastError",
        "transferSize", "transferModifiedNanos", "transferInode", "transferETag",
        "updatedAt",
        "moveTarget", "resolution", "fetchedAt", "transferState",
        "syncedLocalChangedNanos", "remoteSpelling",
    ]

    /// The row's values in `columnNames` order, converted here: an array of existentials
    /// that GRDB converts one by one was half of the journal's work per written row.
    var columnValues: [DatabaseValue] {
        [
            pairId.databaseValue, path.databaseValue, queue.databaseValue,
            status.rawValue.databaseValue, action?.rawValue.databaseValue ?? .null,
            localSize.databaseValue, localModifiedNanos.databaseValue, localInode.databaseValue, localHash.databaseValue,
            remoteSize.databaseValue, remoteModifiedNanos.databaseValue, remoteETag.databaseValue,
            syncedLocalSize.databaseValue, syncedLocalModifiedNanos.databaseValue, syncedLocalInode.databaseValue,
            syncedRemoteSize.databaseValue, syncedRemoteModifiedNanos.databaseValue, syncedRemoteETag.databaseValue, syncedAt.databaseValue,
            attempts.databaseValue, nextAttemptAt.databaseValue, lastError.databaseValue,
            transferSize.databaseValue, transferModifiedNanos.databaseValue, transferInode.databaseValue, transferETag.databaseValue,
            updatedAt.databaseValue,
            moveTarget.databaseValue, resolution?.rawValue.databaseValue ?? .null, fetchedAt.databaseValue, transferState.databaseValue,
            syncedLocalChangedNanos.databaseValue, remoteSpelling.databaseValue,
        ]
    }

    /// Inserts the row, or replaces every column of the row with the same pair and path.
    static let upsertSQL: String = {
        let updates = columnNames.filter { $0 != "pairId" && $0 != "path" }.map { "\($0) = excluded.\($0)" }
        return "INSERT INTO file (\(columnNames.joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: columnNames.count).joined(separator: ", ")
            + ") ON CONFLICT(pairId, path) DO UPDATE SET " + updates.joined(separator: ", ")
    }()

    public func encode(to container: inout PersistenceContainer) throws {
        for (name, value) in zip(Self.columnNames, columnValues) {
            container[name] = value
        }
    }

    /// The select list of a read decoded by `init(columnsInOrder:)`.
    static let selectList = columnNames.joined(separator: ", ")

    /// A row selected with `selectList`, read by position. GRDB's `Codable` decoding looks
    /// every column up by name in a dictionary; for the pages that planning reads (every
    /// row of a million-file journal on a no-op run) that lookup was the largest part of
    /// the decoding.
    init(columnsInOrder row: Row) throws {
        let statusText: String = row[3]
        guard let status = FileStatus(rawValue: statusText) else {
            throw DatabaseError(message: "unknown file status '\(statusText)' in the journal")
        }
        self.init(pairId: row[0], path: row[1], queue: row[2], status: status, updatedAt: row[26])
        var action: FileAction?
        if let text: String = row[4] {
            guard let known = FileAction(rawValue: text) else { throw DatabaseError(message: "unknown file action '\(text)' in the journal") }
            action = known
        }
        restoreJob(action: action, attempts: row[19], nextAttemptAt: row[20], lastError: row[21])
        localSize = row[5]
        localModifiedNanos = row[6]
        localInode = row[7]
        localHash = row[8]
        remoteSize = row[9]
        remoteModifiedNanos = row[10]
        remoteETag = row[11]
        syncedLocalSize = row[12]
        syncedLocalModifiedNanos = row[13]
        syncedLocalInode = row[14]
        syncedRemoteSize = row[15]
        syncedRemoteModifiedNanos = row[16]
        syncedRemoteETag = row[17]
        syncedAt = row[18]
        transferSize = row[22]
        transferModifiedNanos = row[23]
        transferInode = row[24]
        transferETag = row[25]
        moveTarget = row[27]
        if let text: String = row[28] {
            guard let resolution = ConflictPolicy(rawValue: text) else {
                throw DatabaseError(message: "unknown conflict answer '\(text)' in the journal")
            }
            self.resolution = resolution
        }
        fetchedAt = row[29]
        transferState = row[30]
        syncedLocalChangedNanos = row[31]
        remoteSpelling = row[32]
    }

    /// Rows of `file` read by position: `clause` is what follows `FROM file` (conditions,
    /// order, limit).
    static func fetchInOrder(_ db: Database, _ clause: String, arguments: StatementArguments) throws -> [FileRecord] {
        let rows = try Row.fetchCursor(db, sql: "SELECT \(selectList) FROM file " + clause, arguments: arguments)
        var records: [FileRecord] = []
        while let row = try rows.next() { records.append(try FileRecord(columnsInOrder: row)) }
        return records
    }

    /// Writes this row with the cached upsert statement.
    func write(_ db: Database) throws {
        try Self.write(CollectionOfOne(self), with: Self.upsertStatement(db))
    }

    /// Writes `records` with `upsertStatement`, looked up once for all of them: the first
    /// row's arguments are set through GRDB, the others bound in their place (`rebind`).
    static func write(_ records: some Sequence<FileRecord>, with upsert: Statement) throws {
        var isFirst = true
        for record in records {
            if isFirst {
                upsert.setUncheckedArguments(record.upsertArguments)
                isFirst = false
            } else {
                upsert.rebind(record.columnValues)
            }
            try upsert.execute()
        }
    }

    /// `columnValues` as the upsert's arguments, for the first row of a batch (the others
    /// are bound in place), through GRDB's array-literal initializer: GRDB specializes that
    /// one for its own element type, while its initializer from a sequence runs
    /// unspecialized across the module boundary, reading each value through a key path.
    private var upsertArguments: StatementArguments {
        let v = columnValues
        // Unchecked arguments bind what is there: a column left out would be written NULL.
        precondition(v.count == 33, "the upsert's argument list must name every column")
        return [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15],
                v[16], v[17], v[18], v[19], v[20], v[21], v[22], v[23], v[24], v[25], v[26], v[27], v[28], v[29], v[30],
                v[31], v[32]]
    }

    static func upsertStatement(_ db: Database) throws -> Statement {
        try db.cachedStatement(sql: upsertSQL)
    }
}
