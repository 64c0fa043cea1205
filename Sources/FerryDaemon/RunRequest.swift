/// Why a pair should run, and with what restriction. Requests that arrive while the pair
/// runs are merged into one follow-up run.
public struct RunRequest: Sendable, Equatable {
    /// For logs and the status: `watch`, `rescan`, `poll`, `schedule: push media`.
    public var reason: String
    /// Only these queues; nil for all.
    public var queues: Set<String>?
    /// Files that settled (from the watcher): new ones among them can join a run already
    /// under way.
    public var settledFiles: Set<String>
    /// Subfolders that settled (new or moved in): their files can join a running run too.
    public var settledFolders: Set<String>
    /// Files the watcher saw go (deleted, or renamed away: an editor's temporary file).
    public var removedFiles: Set<String>
    /// A person accepted the changes a held run would make (`--accept-changes`).
    public var acceptsChanges: Bool

    public init(reason: String, queues: Set<String>? = nil, settledFiles: Set<String> = [], settledFolders: Set<String> = [],
                removedFiles: Set<String> = [], acceptsChanges: Bool = false) {
        self.reason = reason
        self.queues = queues
        self.settledFiles = settledFiles
        self.settledFolders = settledFolders
        self.removedFiles = removedFiles
        self.acceptsChanges = acceptsChanges
    }

    /// One run that does what both would: all queues if either wants all.
    public func merged(with other: RunRequest) -> RunRequest {
        let queues: Set<String>? = switch (self.queues, other.queues) {
        case let (mine?, theirs?): mine.union(theirs)
        default: nil
        }
        return RunRequest(reason: reason == other.reason ? reason : reason + ", " + other.reason, queues: queues,
                          settledFiles: settledFiles.union(other.settledFiles),
                          settledFolders: settledFolders.union(other.settledFolders),
                          removedFiles: removedFiles.union(other.removedFiles),
                          acceptsChanges: acceptsChanges || other.acceptsChanges)
    }
}
