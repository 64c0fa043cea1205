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
}
