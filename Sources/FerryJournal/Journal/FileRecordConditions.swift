import FerryPlanning

/// Conditions on the `file` table that partial indexes are built on (migration
/// "v7-partial-indexes-for-run-start"). SQLite uses such an index only for a query whose
/// WHERE clause contains the index's condition as written, literals included, so the
/// indexes and the queries share these texts; a bound parameter in their place would
/// make SQLite read the whole table again.
extension FileRecord {
    /// A file with a partial transfer recorded, or left mid-upload.
    static let hasPartialTransfer = "transferSize IS NOT NULL OR status = '\(FileStatus.uploading.rawValue)'"

    /// A path with a component that starts with `.`.
    static let isHidden = "path LIKE '.%' OR path LIKE '%/.%'"
}
