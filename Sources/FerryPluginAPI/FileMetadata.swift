/// What `lstat` says about a local path, in the units the journal stores.
public struct FileMetadata: Hashable, Sendable {
    public enum Kind: Sendable {
        case file
        case directory
        case symbolicLink
        case other
    }

    public var kind: Kind
    public var size: Int64
    public var modifiedNanos: Int64
    public var inode: UInt64
    public var device: UInt64
    public var permissions: UInt32
    /// The status-change time (ctime) in nanoseconds, 0 when unknown. Any write to the file
    /// moves it, and no user can set it back (`touch -r` sets only the modification and
    /// access times), so it tells an edit in place that kept size and modification time.
    public var changedNanos: Int64

    public init(kind: Kind, size: Int64, modifiedNanos: Int64, inode: UInt64, device: UInt64, permissions: UInt32,
                changedNanos: Int64 = 0) {
        self.kind = kind
        self.size = size
        self.modifiedNanos = modifiedNanos
        self.inode = inode
        self.device = device
        self.permissions = permissions
        self.changedNanos = changedNanos
    }

    /// Same content version as far as metadata can tell: size, mtime and inode.
    public func sameVersion(as other: FileMetadata) -> Bool {
        size == other.size && modifiedNanos == other.modifiedNanos && inode == other.inode
    }
}
