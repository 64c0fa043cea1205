/// A pull or sync folder's cache budget (`local_limit:`): how much of the remote the local
/// folder keeps, and which files go first when it holds more.
public struct LocalLimit: Sendable, Equatable {
    /// Which files leave the cache first.
    public enum EvictionOrder: String, Sendable, CaseIterable {
        /// Oldest modification time first (the default).
        case oldest
        /// Oldest access time first, where the filesystem records one (`noatime` mounts
        /// do not: there it is the same as `oldest`).
        case leastRecentlyUsed = "least-recently-used"
    }

    /// Most bytes of files kept locally; nil for no bound on size.
    public var maxBytes: Int64?
    /// Most files kept locally; nil for no bound on count.
    public var maxFiles: Int?
    public var order: EvictionOrder = .oldest
    /// Queues whose files are never evicted (`keep_queues: [thumbnails]`).
    public var keepQueues: Set<String> = []

    public init(maxBytes: Int64? = nil, maxFiles: Int? = nil, order: EvictionOrder = .oldest, keepQueues: Set<String> = []) {
        self.maxBytes = maxBytes
        self.maxFiles = maxFiles
        self.order = order
        self.keepQueues = keepQueues
    }

    /// Whether a folder holding `bytes` in `files` files is over this budget.
    public func isExceeded(bytes: Int64, files: Int) -> Bool {
        (maxBytes.map { bytes > $0 } ?? false) || (maxFiles.map { files > $0 } ?? false)
    }
}
