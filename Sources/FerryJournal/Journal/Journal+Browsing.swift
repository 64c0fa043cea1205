import FerryPlanning
import GRDB

/// Reading the journal a page at a time for the control API and the health report.
extension Journal {
    /// Up to `limit` rows of a pair in path order after `after`, narrowed to `statuses`
    /// (nil: all) and to paths starting with `prefix` (a folder, or any start of a name).
    public func records(pairId: Int64, statuses: [FileStatus]?, prefix: String?, after: String?,
                        limit: Int) async throws(JournalError) -> [FileRecord] {
        try await read { db in
            var sql = "WHERE pairId = ? AND path > ?"
            var arguments: StatementArguments = [pairId, after ?? ""]
            if let statuses {
                sql += " AND status IN (" + statuses.map { _ in "?" }.joined(separator: ", ") + ")"
                for status in statuses { _ = arguments.append(contentsOf: [status.rawValue]) }
            }
            if let prefix, !prefix.isEmpty {
                // A range on the path index rather than LIKE, whose wildcards a path may contain.
                sql += " AND path >= ? AND path < ?"
                _ = arguments.append(contentsOf: [prefix, prefix + "\u{10FFFF}"])
            }
            sql += " ORDER BY path LIMIT ?"
            _ = arguments.append(contentsOf: [limit])
            return try FileRecord.fetchInOrder(db, sql, arguments: arguments)
        }
    }

    /// Per queue: files waiting to move (pending or under way) and the oldest one's last
    /// change, for the health report's "has not moved for a day".
    public func waitingQueues(pairId: Int64) async throws(JournalError) -> [(queue: String, files: Int, oldestSince: Double)] {
        let statuses = FileStatus.allCases.filter(\.isPending)
        return try await read { db in
            try Row.fetchAll(db, sql: """
                SELECT queue, COUNT(*) AS files, MIN(updatedAt) AS oldest FROM file
                WHERE pairId = ? AND status IN (\(statuses.map { "'\($0.rawValue)'" }.joined(separator: ", ")))
                GROUP BY queue ORDER BY queue
                """, arguments: [pairId]).map { (queue: $0["queue"], files: $0["files"], oldestSince: $0["oldest"]) }
        }
    }
}
