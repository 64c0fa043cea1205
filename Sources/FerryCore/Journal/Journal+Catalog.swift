import FerryPlanning
import FerryPluginAPI
import GRDB

extension Journal {
    /// The pair's files with a component that starts with `.` whose remote copy Ferry
    /// knows (the version of their last sync), for the remote catalog (`RemoteCatalog`).
    public func catalogEntries(pairId: Int64) async throws(JournalError) -> [RemoteCatalog.Entry] {
        try await read { db in
            try Row.fetchAll(db, sql: """
                SELECT path, syncedRemoteSize, syncedRemoteModifiedNanos FROM file
                WHERE pairId = ? AND syncedRemoteSize IS NOT NULL AND (\(FileRecord.isHidden))
                """, arguments: [pairId])
                .compactMap { row -> RemoteCatalog.Entry? in
                    let path: String = row["path"]
                    guard RemoteCatalog.covers(path) else { return nil }
                    return RemoteCatalog.Entry(path: path, size: row["syncedRemoteSize"], modifiedNanos: row["syncedRemoteModifiedNanos"])
                }
        }
    }

    /// The modification times of the pair's files in sync, each with the remote version it
    /// was synced as, by the remote's spelling of the path, in path order, at most `limit`:
    /// what a catalog keeps for a store that keeps no times (`KeptFileTime`).
    func keptFileTimes(pairId: Int64, limit: Int) async throws(JournalError) -> [KeptFileTime] {
        try await read { db in
            let rows = try Row.fetchCursor(db, sql: """
                SELECT COALESCE(remoteSpelling, path), syncedRemoteSize, syncedRemoteETag, syncedLocalModifiedNanos FROM file
                WHERE pairId = ? AND status IN (?, ?) AND syncedRemoteSize IS NOT NULL AND syncedRemoteETag IS NOT NULL
                  AND syncedLocalModifiedNanos IS NOT NULL
                ORDER BY path LIMIT ?
                """, arguments: [pairId, FileStatus.inSync.rawValue, FileStatus.remoteOnly.rawValue, limit])
            var times: [KeptFileTime] = []
            while let row = try rows.next() {
                times.append(KeptFileTime(path: row[0], size: row[1], etag: row[2], modifiedNanos: row[3]))
            }
            return times
        }
    }
}
