/// One file to fetch into a partial local file that the core owns.
///
/// The core creates the partial file (through an anchored, link-free path, empty or
/// holding `offset` bytes), then verifies it, sets its modification time and renames it
/// into place; the backend only opens it — without creating it and without following a
/// link at its name — and fills it. A backend that created the file could be sent, by a
/// folder swapped for a link during the transfer, to write somewhere else.
public struct DownloadRequest: Sendable {
    public var source: RelativePath
    /// Absolute path of the local partial file to write; it exists when the call is made,
    /// unless `openPartial` is given (then the path names the file only in messages).
    public var partialFile: String
    /// The partial file already open for writing, made with no name (a local disk's
    /// `O_TMPFILE`), which the backend writes instead of opening `partialFile`. Only a
    /// `DirectDownloadBackend`'s `downloadNow`, in this process, is given one; it knows
    /// the type (FerrySystem's `OpenFile`).
    public var openPartial: (any Sendable)?
    /// Bytes already in the partial file from an earlier attempt; the backend appends from
    /// here when it can, or truncates and starts again (and says so).
    public var offset: Int64
    /// The remote file as listed when the job was planned: a remote that no longer matches
    /// (size, modification time or ETag) means the partial bytes are stale.
    public var expected: RemoteEntry
    /// Whether the backend flushes the partial file to disk before it returns. False when
    /// the core flushes a batch of small downloads at once (one `syncfs`) before it puts
    /// any of them in place, or when the file is a scratch copy; a backend may flush anyway.
    public var flush: Bool

    public init(source: RelativePath, partialFile: String, offset: Int64, expected: RemoteEntry, flush: Bool = true,
                openPartial: (any Sendable)? = nil) {
        self.source = source
        self.partialFile = partialFile
        self.openPartial = openPartial
        self.offset = offset
        self.expected = expected
        self.flush = flush
    }
}

/// What a download did.
public struct DownloadResult: Sendable {
    /// The remote file as it stood when read.
    public var entry: RemoteEntry
    /// Bytes written by this call.
    public var bytesReceived: Int64
    /// Where this call started writing; 0 when it started over.
    public var resumedFrom: Int64

    public init(entry: RemoteEntry, bytesReceived: Int64, resumedFrom: Int64) {
        self.entry = entry
        self.bytesReceived = bytesReceived
        self.resumedFrom = resumedFrom
    }
}
