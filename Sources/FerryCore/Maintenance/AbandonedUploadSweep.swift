import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI

/// Uploads a backend holds unfinished below a pair's remote folder (S3 multipart uploads)
/// are aborted — by age at the start of every push or sync, or all of them with `ferry
/// doctor --cleanup` — except those the pair's journal means to continue: a file whose
/// partial transfer is recorded (the version it came from, `transferLocal`) resumes the
/// store's upload on the next run, however old it is.
public enum AbandonedUploadSweep {
    /// The remote paths of the pair's files with a partial transfer recorded.
    public static func keeping(_ journal: Journal, pairId: Int64, remoteRoot: RelativePath) async throws(JournalError) -> Set<RelativePath> {
        var paths: Set<RelativePath> = []
        for path in try await journal.pathsWithPartialTransfers(pairId: pairId) {
            guard let relative = try? RelativePath(path) else { continue }
            paths.insert(remoteRoot.appending(relative))
        }
        return paths
    }

    /// Aborts the pair's abandoned uploads started more than `olderThanSeconds` ago (nil:
    /// the backend's own setting); returns what was aborted.
    public static func run(_ pair: FolderPair, journal: Journal, pairId: Int64,
                           olderThanSeconds: Int64?) async throws -> [AbandonedUpload] {
        let keeping = try await keeping(journal, pairId: pairId, remoteRoot: pair.remoteRoot)
        return try await pair.backend.abortAbandonedUploads(below: pair.remoteRoot, keeping: keeping, olderThanSeconds: olderThanSeconds)
    }
}
