import GRDB

/// How a `FileRecord` is written: one column list, in table order, that both the
/// prepared upsert statement and GRDB's persistence container use.
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
        "moveTarget", "resolution", "fetchedAt",
    ]

    /// The row's values in `columnNames` order.
    var columnValues: [(any DatabaseValueConvertible)?] {
        [
            pairId, path, queue, status.rawValue, action?.rawValue,
            localSize, localModifiedNanos, localInode, localHash,
            remoteSize, remoteModifiedNanos, remoteETag,
            syncedLocalSize, syncedLocalModifiedNanos, syncedLocalInode,
            syncedRemoteSize, syncedRemoteModifiedNanos, syncedRemoteETag, syncedAt,
            attempts, nextAttemptAt, lastError,
            transferSize, transferModifiedNanos, transferInode, transferETag,
            updatedAt,
            moveTarget, resolution?.rawValue, fetchedAt,
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

    /// Writes this row with the cached upsert statement.
    func write(_ db: Database) throws {
        let statement = try db.cachedStatement(sql: Self.upsertSQL)
        statement.setUncheckedArguments(StatementArguments(columnValues))
        try statement.execute()
    }
}
