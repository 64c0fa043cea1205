import FerryPlanning
import GRDB

extension Journal {
    /// Paths of a pair's files with a partial transfer recorded, or left mid-upload: the
    /// unfinished uploads on the remote that the next run continues (FerryCore's
    /// `AbandonedUploadSweep` keeps them).
    package func pathsWithPartialTransfers(pairId: Int64) async throws(JournalError) -> [String] {
        try await read { db in
            try String.fetchAll(db, sql: "SELECT path FROM file WHERE pairId = ? AND (\(FileRecord.hasPartialTransfer))",
                                arguments: [pairId])
        }
    }
}
