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

    /// The row's `settled` column is what makes it settled: SQLite computes it from the
    /// row's columns whenever the row is written (`JournalMigrations.v13SettledCondition`).
    static let selectList = "path, localSize, localModifiedNanos, localInode, settled"

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
