/// One transfer queue and the files that belong to it.
public struct QueueRule: Sendable, Equatable {
    public var name: String
    /// Globs on the path relative to the folder (see `GlobPattern`); any one matching is enough.
    public var match: [String]
    /// Size bounds in bytes, inclusive; a file outside them is not in this queue.
    public var minSize: Int64?
    public var maxSize: Int64?
    /// Most transfers of this queue's files of 1 MiB or more running at once; smaller files
    /// are bound only by the global cap (`transfers.max`), see `SchedulerState`.
    public var concurrency: Int
    /// How a two-way sync settles this queue's conflicts, unless the folder says otherwise.
    public var conflict: ConflictPolicy?

    public init(name: String, match: [String], minSize: Int64? = nil, maxSize: Int64? = nil, concurrency: Int,
                conflict: ConflictPolicy? = nil) {
        self.name = name
        self.match = match
        self.minSize = minSize
        self.maxSize = maxSize
        self.concurrency = concurrency
        self.conflict = conflict
    }
}
