import FerryPlanning
import GRDB

/// What the journal knows of a pair's files, for answers that need no server: `ferry ls`
/// of an offline remote (or with `--cached`) and `ferry find`.
public struct KnownFile: Sendable, Equatable {
    public var path: String
    public var status: FileStatus
    /// The local side as last scanned, the remote side as last listed (nil: not there).
    public var localSize: Int64?
    public var localModifiedNanos: Int64?
    public var remoteSize: Int64?
    public var remoteModifiedNanos: Int64?
    public var remoteETag: String?
}

extension Journal {
    /// The pair's files whose path passes `keep`, in path order, read row by row (a million
    /// rows are never held at once), at most `limit`. `prefix` narrows the read to paths
    /// that start with it (a folder's).
    public func knownFiles(pairId: Int64, prefix: String = "", limit: Int = .max,
                           keep: @escaping @Sendable (String) -> Bool) async throws(JournalError) -> [KnownFile] {
        try await read { db in
            var found: [KnownFile] = []
            let sql = """
                SELECT path, status, localSize, localModifiedNanos, remoteSize, remoteModifiedNanos, remoteETag
                FROM file WHERE pairId = ? AND path >= ? AND path < ? ORDER BY path
                """
            let rows = try Row.fetchCursor(db, sql: sql, arguments: [pairId, prefix, prefix + "\u{10FFFF}"])
            while let row = try rows.next(), found.count < limit {
                let path: String = row[0]
                guard keep(path), let status = FileStatus(rawValue: row[1]) else { continue }
                found.append(KnownFile(path: path, status: status, localSize: row[2], localModifiedNanos: row[3],
                                       remoteSize: row[4], remoteModifiedNanos: row[5], remoteETag: row[6]))
            }
            return found
        }
    }
}
