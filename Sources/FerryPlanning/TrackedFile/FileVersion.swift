import FerryPluginAPI

/// A local file's version as metadata tells it.
public struct LocalVersion: Hashable, Sendable, Codable {
    public var size: Int64
    public var modifiedNanos: Int64
    public var inode: Int64

    public init(size: Int64, modifiedNanos: Int64, inode: Int64) {
        self.size = size
        self.modifiedNanos = modifiedNanos
        self.inode = inode
    }
}

/// A remote file's version as a listing tells it.
public struct RemoteVersion: Hashable, Sendable, Codable {
    public var size: Int64
    public var modifiedNanos: Int64?
    public var etag: String?

    /// A weak ETag (`W/"…"`) is kept without its marker: Apache marks a file's ETag weak
    /// for the first second after a write and strong afterwards, with the same value, and
    /// a download answered in that second must not make the next listing look like a change.
    public init(size: Int64, modifiedNanos: Int64?, etag: String?) {
        self.size = size
        self.modifiedNanos = modifiedNanos
        self.etag = etag.map { $0.hasPrefix("W/") ? String($0.dropFirst(2)) : $0 }
    }

    /// What a listing says of a file's version.
    public init(_ entry: RemoteEntry) {
        self.init(size: entry.size, modifiedNanos: entry.modifiedNanos, etag: entry.etag)
    }

    /// Whether two observations of the remote are the same version: same size, and the
    /// same ETag when both have one, else the same modification time when both have one.
    public func isSameVersion(as other: RemoteVersion) -> Bool {
        guard size == other.size else { return false }
        if let etag, let otherETag = other.etag { return Self.strong(etag) == Self.strong(otherETag) }
        if let modifiedNanos, let otherModified = other.modifiedNanos { return modifiedNanos == otherModified }
        return true
    }

    /// Whether this remote file holds the same content as a local version, as far as size
    /// and modification time can tell. Remotes that keep whole seconds only compare on seconds.
    public func matches(_ local: LocalVersion) -> Bool {
        guard size == local.size, let modifiedNanos else { return false }
        if modifiedNanos == local.modifiedNanos { return true }
        let remoteKeepsSecondsOnly = modifiedNanos % 1_000_000_000 == 0
        return remoteKeepsSecondsOnly && modifiedNanos / 1_000_000_000 == floorSeconds(local.modifiedNanos)
    }

    /// An ETag without the weak marker (journals written before it was dropped on the way in).
    private static func strong(_ etag: String) -> Substring {
        etag.hasPrefix("W/") ? etag.dropFirst(2) : Substring(etag)
    }

    private func floorSeconds(_ nanos: Int64) -> Int64 {
        nanos >= 0 ? nanos / 1_000_000_000 : (nanos - 999_999_999) / 1_000_000_000
    }
}
