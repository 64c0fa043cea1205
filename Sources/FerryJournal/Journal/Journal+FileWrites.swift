import FerryPlanning

/// The writes of file rows, each named by why it is made. They share one mechanism (rows
/// written and removed, `batchSize` per transaction); the names are what a reader of a
/// caller, or of a change to the journal, goes by. A row's single changes go through
/// `change(pairId:path:_:)`, `retryFailed` and `resolveConflicts`.
extension Journal {
    /// A plan's decisions: jobs queued, files found in sync, deletions held, new names
    /// waiting for a move; and the rows of files gone from both sides.
    public func applyPlan(_ rows: [FileRecord],
                          forgetting gone: [(pairId: Int64, path: String)] = []) async throws(JournalError) {
        try await writeRows(rows, removing: gone)
    }

    /// What transfers came to (done, failed, waiting for a retry, restored from a bundle),
    /// and the rows of files a transfer removed from both sides.
    public func bookResults(_ rows: [FileRecord],
                            removing gone: [(pairId: Int64, path: String)] = []) async throws(JournalError) {
        try await writeRows(rows, removing: gone)
    }

    /// Forgets files that went away before anything was done with them, or whose remote
    /// copy is retired: their rows go, nothing else changes.
    public func forget(_ files: [(pairId: Int64, path: String)]) async throws(JournalError) {
        try await writeRows([], removing: files)
    }

    /// `ferry verify --repair`: rows set to what both sides hold, rows of files neither
    /// side has removed.
    public func applyRepairs(_ rows: [FileRecord],
                             removing gone: [(pairId: Int64, path: String)]) async throws(JournalError) {
        try await writeRows(rows, removing: gone)
    }
}
