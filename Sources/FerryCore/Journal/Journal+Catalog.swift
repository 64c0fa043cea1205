import FerryEngine
import FerryJournal

/// The remote catalog's entries from what the journal knows (FerryJournal's
/// `Journal+Catalog`: the versions of files as last synced).
extension Journal {
    /// The pair's files with a component that starts with `.` whose remote copy Ferry
    /// knows (the version of their last sync), for the remote catalog (`RemoteCatalog`).
    public func catalogEntries(pairId: Int64) async throws(JournalError) -> [RemoteCatalog.Entry] {
        try await syncedHiddenFiles(pairId: pairId).compactMap { file -> RemoteCatalog.Entry? in
            guard RemoteCatalog.covers(file.path) else { return nil }
            return RemoteCatalog.Entry(path: file.path, size: file.size, modifiedNanos: file.modifiedNanos)
        }
    }

    /// The modification times of the pair's files in sync, each with the remote version it
    /// was synced as, by the remote's spelling of the path, in path order, at most `limit`:
    /// what a catalog keeps for a store that keeps no times (`KeptFileTime`).
    func keptFileTimes(pairId: Int64, limit: Int) async throws(JournalError) -> [KeptFileTime] {
        try await syncedFileTimes(pairId: pairId, limit: limit).map {
            KeptFileTime(path: $0.remotePath, size: $0.size, etag: $0.etag, modifiedNanos: $0.modifiedNanos)
        }
    }
}
