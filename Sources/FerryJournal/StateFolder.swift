import FerryPluginAPI
import FerrySystem

/// A state folder (`--state DIR`): the only opener of its journal and its run history.
///
/// One instance is made where a command or the daemon starts and is handed to every part
/// that reads or writes them, so a process keeps one connection pool per database instead
/// of one per caller. A handle follows the path: when the file under the name is no longer
/// the one that was opened (a damaged journal moved aside, as its error advises), the next
/// caller opens what is there now, as a new process would. Opening runs on the blocking
/// pool: a new database's schema costs several flushes.
public actor StateFolder {
    public static let journalFileName = "journal.sqlite"

    public nonisolated let directory: String
    private var journalHandle: Handle<Journal>?
    private var historyHandle: Handle<RunHistory>?

    public init(directory: String) {
        self.directory = directory
    }

    public nonisolated var journalPath: String { Self.journalPath(in: directory) }
    public nonisolated var historyPath: String { RunHistory.path(in: directory) }

    public static func journalPath(in directory: String) -> String {
        LocalFileSystem.join(directory, journalFileName)
    }

    /// The journal, created (with the folder) and brought up to date on first use.
    public func journal() async throws(JournalError) -> Journal {
        let path = journalPath
        if let current = journalHandle?.store(at: path) { return current }
        let opened = try await BlockingIO.run { () throws(JournalError) in try Journal.open(at: path) }
        // Another caller may have opened it while this one waited: one handle is kept.
        if let current = journalHandle?.store(at: path) { return current }
        journalHandle = Handle(store: opened, file: FileIdentity(path))
        return opened
    }

    /// The journal if this folder has one; nil before the first run. Nothing is created.
    public func existingJournal() async throws(JournalError) -> Journal? {
        guard FileIdentity(journalPath) != nil else {
            journalHandle = nil
            return nil
        }
        return try await journal()
    }

    /// The run history, created on first use.
    public func history() async throws(HistoryError) -> RunHistory {
        let path = historyPath, directory = directory
        if let current = historyHandle?.store(at: path) { return current }
        let opened = try await BlockingIO.run { () throws(HistoryError) in try RunHistory.open(stateDirectory: directory) }
        if let current = historyHandle?.store(at: path) { return current }
        historyHandle = Handle(store: opened, file: FileIdentity(path))
        return opened
    }

    /// Closes the journal and the run history once the process is done with them, so that
    /// their write-ahead logs are checkpointed and removed instead of being left for the next
    /// start to replay. A later call opens them again.
    public func close() async {
        let journal = journalHandle?.store
        let history = historyHandle?.store
        journalHandle = nil
        historyHandle = nil
        await BlockingIO.run {
            journal?.close()
            history?.close()
        }
    }

    /// The run history if any run was recorded; nil otherwise. Nothing is created.
    public func existingHistory() async throws(HistoryError) -> RunHistory? {
        guard FileIdentity(historyPath) != nil else {
            historyHandle = nil
            return nil
        }
        return try await history()
    }
}

/// An opened store and the file it opened.
private struct Handle<Store: Sendable>: Sendable {
    let store: Store
    let file: FileIdentity?

    /// The store, while `path` still names the file it opened; one whose file could not be
    /// identified is never reused.
    func store(at path: String) -> Store? {
        guard let file, FileIdentity(path) == file else { return nil }
        return store
    }
}

/// Which file a name points to: a file moved aside and another made under the name differ.
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    init?(_ path: String) {
        guard let metadata = try? LocalFileSystem.metadata(path) else { return nil }
        device = metadata.device
        inode = metadata.inode
    }
}
