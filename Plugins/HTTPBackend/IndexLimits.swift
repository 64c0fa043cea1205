/// Bounds that protect against huge or endless folder indexes, and against an HTML index
/// turning one listing into an unbounded number of requests.
public struct IndexLimits: Sendable, Equatable {
    /// The largest index body that is read at all, in bytes (default 64 MiB; an nginx JSON
    /// index costs about 100 bytes per entry, an HTML one 100–250).
    public var maxBytes: Int
    /// The most entries one folder may have (default 200,000).
    public var maxEntries: Int
    /// The most `HEAD` requests one listing may send to learn the sizes an HTML index does
    /// not give (default 10,000 files per folder); a bigger folder is refused, with a hint
    /// to use a JSON index.
    public var maxHeadRequests: Int
    /// How many of those `HEAD` requests run at once (default 4).
    public var headConcurrency: Int

    public init(maxBytes: Int = 64 * 1024 * 1024, maxEntries: Int = 200_000,
                maxHeadRequests: Int = 10_000, headConcurrency: Int = 4) {
        self.maxBytes = maxBytes
        self.maxEntries = maxEntries
        self.maxHeadRequests = maxHeadRequests
        self.headConcurrency = max(1, headConcurrency)
    }
}
