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

    public init(kind: Kind, size: Int64, modifiedNanos: Int64, inode: UInt64, device: UInt64, permissions: UInt32) {
        self.kind = kind
        self.size = size
        self.modifiedNanos = modifiedNanos
        self.inode = inode
        self.device = device
        self.permissions = permissions
    }

    /// Same content version as far as metadata can tell: size, mtime and inode.
    public func sameVersion(as other: FileMetadata) -> Bool {
        size == other.size && modifiedNanos == other.modifiedNanos && inode == other.inode
    }
}
