/// How a two-way sync settles a file that changed on both sides since the last sync.
public enum ConflictPolicy: String, Sendable, CaseIterable, Codable {
    /// Both versions survive: the newer keeps the name, the other is kept on both sides as
    /// `NAME.conflict-YYYYMMDD-HHMMSS-HOST.EXT`. Nothing is lost.
    case keepBoth = "keep-both"
    /// Last write wins by modification time; a tie (or a remote without times) keeps both.
    case newer
    /// The local version wins; the remote one goes to the remote trash.
    case local
    /// The remote version wins; the local one goes to the local trash.
    case remote
    /// Nothing happens: the file stays in `conflict` until `ferry resolve`.
    case ask
}

/// The conflict policy for each file of a folder pair: the folder's setting for the file's
/// queue, else the folder's default, else the queue's own setting, else keep-both.
///
/// The folder comes first because it is the narrower, explicit choice ("this folder is a
/// phone dump: the phone wins"); a queue's setting says what suits a kind of file everywhere.
public struct ConflictPolicies: Sendable, Equatable {
    /// A folder's `conflict:` key: one policy, or a mapping of queue names (and `default`).
    public struct FolderSetting: Sendable, Equatable {
        public var fallback: ConflictPolicy?
        public var perQueue: [String: ConflictPolicy]

        public init(fallback: ConflictPolicy? = nil, perQueue: [String: ConflictPolicy] = [:]) {
            self.fallback = fallback
            self.perQueue = perQueue
        }
    }

    public var folder: FolderSetting
    public var queues: [String: ConflictPolicy]

    public init(folder: FolderSetting = .init(), queues: [String: ConflictPolicy] = [:]) {
        self.folder = folder
        self.queues = queues
    }

    public init(folder: FolderSetting, rules: [QueueRule]) {
        var queues: [String: ConflictPolicy] = [:]
        for rule in rules { if let policy = rule.conflict { queues[rule.name] = policy } }
        self.init(folder: folder, queues: queues)
    }

    public func policy(forQueue queue: String) -> ConflictPolicy {
        folder.perQueue[queue] ?? folder.fallback ?? queues[queue] ?? .keepBoth
    }
}
