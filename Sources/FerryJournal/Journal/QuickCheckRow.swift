import FerryPlanning
import GRDB

/// A journal row as the quick check of a push between listings reads it (`PagedPlanning`):
/// its path, its local version, and whether the row is settled. A settled row whose file
/// the scan finds at the same version is one that planning would leave as it is, so only
/// the other rows are read whole.
///
/// In a profile of a no-op push of 1,000,000 files, reading and decoding all 31 columns of
/// every row was a quarter of the CPU; five columns and one test are a small part of that.
package struct QuickCheckRow: Sendable, Equatable {
    package var path: String
    package var local: LocalVersion?
    package var isSettled: Bool

    /// What makes a row settled, in SQL: the row is in sync with nothing pending, failed or
    /// half-transferred (`FileRecord.isConfirmedInSync`), and both sides are at the versions
    /// last synced, so that `Planner.decide` answers `.inSync` for a push. Stricter than
    /// those where that is simpler (the remote versions compared field by field rather than
    /// by `isSameVersion`; no move, answer or fetch noted): a row it leaves out is only
    /// planned the long way.
    static let settledCondition = """
        status = '\(FileStatus.inSync.rawValue)' AND action IS NULL AND attempts = 0 AND nextAttemptAt IS NULL \
        AND lastError IS NULL AND transferSize IS NULL AND transferModifiedNanos IS NULL \
        AND transferInode IS NULL AND transferETag IS NULL AND transferState IS NULL \
        AND moveTarget IS NULL AND resolution IS NULL AND fetchedAt IS NULL \
        AND localSize IS NOT NULL AND localModifiedNanos IS NOT NULL \
        AND syncedLocalSize = localSize AND syncedLocalModifiedNanos = localModifiedNanos \
        AND remoteSize IS NOT NULL AND syncedRemoteSize = remoteSize \
        AND syncedRemoteModifiedNanos IS remoteModifiedNanos AND syncedRemoteETag IS remoteETag
        """

    /// A comparison with NULL is NULL in SQL, and so can the whole condition be: that is
    /// not settled either.
    static let selectList = "path, localSize, localModifiedNanos, localInode, IFNULL((\(settledCondition)), 0)"

    /// A row selected with `selectList`.
    init(_ row: Row) {
        path = row[0]
        // As `FileRecord.local` reads the same columns.
        if let size: Int64 = row[1], let modifiedNanos: Int64 = row[2] {
            local = LocalVersion(size: size, modifiedNanos: modifiedNanos, inode: row[3] ?? 0)
        }
        isSettled = (row[4] as Bool?) ?? false
    }

    package init(path: String, local: LocalVersion?, isSettled: Bool) {
        self.path = path
        self.local = local
        self.isSettled = isSettled
    }
}
