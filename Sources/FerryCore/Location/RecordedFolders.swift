import FerryConfig
import FerryJournal
import FerrySystem

/// The folder pairs a state folder's journal has recorded, and how a folder's name or a
/// path, given on the command line or to the control API, picks among them. Every command
/// and the API look pairs up here, so `photos` means the same pair to `ferry retry photos`,
/// `ferry fetch photos ...` and `POST /retry`: the configured folder's own pair, never an
/// ad-hoc pair of the same path.
public struct RecordedFolders: Sendable {
    public let journal: Journal
    public let pairs: [FolderPairRecord]

    public init(journal: Journal) async throws(JournalError) {
        self.journal = journal
        pairs = try await journal.folderPairs()
    }

    /// Nil when nothing has run yet (there is no journal); nothing is created.
    public static func read(_ state: StateFolder) async throws(JournalError) -> RecordedFolders? {
        guard let journal = try await state.existingJournal() else { return nil }
        return try await RecordedFolders(journal: journal)
    }

    /// A configured folder's pair: the same name and local root. Nil when it never ran, or
    /// ran only before its path changed in the config (that pair belongs to the old path).
    public func pair(of folder: FolderConfig) -> FolderPairRecord? {
        pairs.first { $0.name == folder.name && $0.localRoot == folder.localPath }
    }

    /// The pairs `text` names: a configured folder's name, its pair; otherwise a local path,
    /// every pair of that folder (ad-hoc ones, and a configured folder's at that path).
    public func pairs(named text: String, config: Config, currentDirectory: String) -> [FolderPairRecord] {
        if let folder = config.folder(named: text) { return pair(of: folder).map { [$0] } ?? [] }
        let root = LocalFileSystem.absolute(text, relativeTo: currentDirectory)
        return pairs.filter { $0.localRoot == root }
    }

    /// The pair and the path inside it that `text` names: a configured folder's name or a
    /// pair's root, the whole folder (nil); a path inside a pair's folder, that file or
    /// folder in the innermost pair holding it. Nil when no pair holds it.
    public func target(_ text: String, config: Config,
                       currentDirectory: String) -> (pair: FolderPairRecord, inside: String?)? {
        if let folder = config.folder(named: text), let pair = pair(of: folder) { return (pair, nil) }
        let absolute = LocalFileSystem.absolute(text, relativeTo: currentDirectory)
        for pair in pairs.sorted(by: { $0.localRoot.count > $1.localRoot.count }) {
            if let inside = Self.path(absolute, inside: pair) { return (pair, inside.isEmpty ? nil : inside) }
        }
        return nil
    }

    /// `absolute` as a path from the pair's root: "" for the root itself, nil when the path
    /// is outside the pair's folder.
    public static func path(_ absolute: String, inside pair: FolderPairRecord) -> String? {
        if absolute == pair.localRoot { return "" }
        let root = pair.localRoot == "/" ? "/" : pair.localRoot + "/"
        return absolute.hasPrefix(root) ? String(absolute.dropFirst(root.count)) : nil
    }
}
