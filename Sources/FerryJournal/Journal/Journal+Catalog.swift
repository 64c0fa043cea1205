import FerryPlanning
import GRDB

/// What the remote catalog (FerryCore's `RemoteCatalog`) is made from: the versions of
/// files as they were last synced. Which files a catalog covers, and what it keeps of
/// them, is FerryCore's (`Journal+Catalog.swift` there).
extension Journal {
    /// A file's remote version as of its last sync.
    package struct SyncedRemoteVersion: Sendable, Equatable {
        package var path: String
        package var size: Int64
        package var modifiedNanos: Int64?
    }

    /// A file in sync, its modification time, and the remote version it was synced as, by
    /// the remote's spelling of its path.
    package struct SyncedFileTime: Sendable, Equatable {
        package var remotePath: String
        package var size: Int64
        package var etag: String
        package var modifiedNanos: Int64
    }

    /// The pair's files with a component that starts with `.` whose remote copy Ferry
    /// knows (the version of their last sync).
    package func syncedHiddenFiles(pairId: Int64) async throws(JournalError) -> [SyncedRemoteVersion] {
        try await read { db in
            try Row.fetchAll(db, sql: """
                SELECT path, syncedRemoteSize, syncedRemoteModifiedNanos FROM file
                WHERE pairId = ? AND syncedRemoteSize IS NOT NULL AND (\(FileRecord.isHidden))
                """, arguments: [pairId])
                .map { SyncedRemoteVersion(path: $0["path"], size: $0["syncedRemoteSize"], modifiedNanos: $0["syncedRemoteModifiedNanos"]) }
        }
    }

    /// The modification times of the pair's files in sync, each with the remote version it
    /// was synced as, by the remote's spelling of the path, in path order, at most `limit`.
    package func syncedFileTimes(pairId: Int64, limit: Int) async throws(JournalError) -> [SyncedFileTime] {
        try await read { db in
            let rows = try Row.fetchCursor(db, sql: """
                SELECT COALESCE(remoteSpelling, path), syncedRemoteSize, syncedRemoteETag, syncedLocalModifiedNanos FROM file
                WHERE pairId = ? AND status IN (?, ?) AND syncedRemoteSize IS NOT NULL AND syncedRemoteETag IS NOT NULL
                  AND syncedLocalModifiedNanos IS NOT NULL
                ORDER BY path LIMIT ?
                """, arguments: [pairId, FileStatus.inSync.rawValue, FileStatus.remoteOnly.rawValue, limit])
            var times: [SyncedFileTime] = []
            while let row = try rows.next() {
                times.append(SyncedFileTime(remotePath: row[0], size: row[1], etag: row[2], modifiedNanos: row[3]))
            }
            return times
        }
    }
}
