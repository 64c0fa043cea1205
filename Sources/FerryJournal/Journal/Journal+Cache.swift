import FerryPlanning
import Foundation
import GRDB

/// What the journal knows of a folder's local cache (`local_limit:`).
extension Journal {
    /// A folder's files held locally and kept only on the remote (evicted), with bytes.
    public struct CacheTotals: Sendable, Equatable {
        public var localFiles = 0
        public var localBytes: Int64 = 0
        public var remoteOnlyFiles = 0
        public var remoteOnlyBytes: Int64 = 0

        public init() {}
    }

    public func cacheTotals(pairId: Int64) async throws(JournalError) -> CacheTotals {
        try await read { db in
            var totals = CacheTotals()
            if let row = try Row.fetchOne(db, sql: """
                SELECT COUNT(*) AS files, COALESCE(SUM(localSize), 0) AS bytes FROM file
                WHERE pairId = ? AND localSize IS NOT NULL
                """, arguments: [pairId]) {
                totals.localFiles = row["files"]
                totals.localBytes = row["bytes"]
            }
            if let row = try Row.fetchOne(db, sql: """
                SELECT COUNT(*) AS files, COALESCE(SUM(COALESCE(remoteSize, syncedRemoteSize, 0)), 0) AS bytes FROM file
                WHERE pairId = ? AND status = ?
                """, arguments: [pairId, FileStatus.remoteOnly.rawValue]) {
                totals.remoteOnlyFiles = row["files"]
                totals.remoteOnlyBytes = row["bytes"]
            }
            return totals
        }
    }

    /// What `ferry pull FOLDER PATH…` asked for: the evicted files it will fetch, and the
    /// paths that name no file the journal knows.
    public struct FetchRequest: Sendable, Equatable {
        public var requested: [String] = []
        public var alreadyLocal = 0
        public var unknown: [String] = []
    }

    /// Marks the evicted files at or below each of `paths` ("" for the whole folder) to be
    /// downloaded by the next run, counted as used at `time`.
    public func requestFetch(pairId: Int64, paths: [String], at time: Double) async throws(JournalError) -> FetchRequest {
        try await write { db in
            var request = FetchRequest()
            for path in paths {
                // A prefix compared exactly (LIKE would ignore ASCII case: `Summer/` is not `summer/`).
                let prefix = path + "/"
                let records = try FileRecord.fetchInOrder(db, """
                    WHERE pairId = ? AND (path = ? OR ? = '' OR substr(path, 1, length(?)) = ?) ORDER BY path
                    """, arguments: [pairId, path, path, prefix, prefix])
                if records.isEmpty { request.unknown.append(path) }
                for var record in records {
                    guard record.isEvicted else {
                        if record.local != nil { request.alreadyLocal += 1 }
                        continue
                    }
                    record.requestFetch(at: time)
                    try record.write(db)
                    request.requested.append(record.path)
                }
            }
            return request
        }
    }
}
