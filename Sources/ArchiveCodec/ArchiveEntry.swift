/// One member of an archive as its header describes it.
public struct ArchiveEntry: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case file
        case directory
        case symbolicLink
        case hardLink
        /// Devices, FIFOs, sockets: never extracted.
        case other
    }

    /// The member's name exactly as stored (untrusted: it may be absolute or contain `..`).
    public var name: String
    public var kind: Kind
    /// Bytes of data; nil when the header does not say (some zip members).
    public var size: Int64?
    public var modifiedNanos: Int64?
    /// Where a symbolic or hard link points, as stored.
    public var linkTarget: String?

    public init(name: String, kind: Kind, size: Int64?, modifiedNanos: Int64?, linkTarget: String? = nil) {
        self.name = name
        self.kind = kind
        self.size = size
        self.modifiedNanos = modifiedNanos
        self.linkTarget = linkTarget
    }
}

/// What extracting or appending one member's data produced.
public struct ArchiveMemberData: Sendable, Equatable {
    public var bytes: Int64
    /// SHA-256 of the data, lowercase hex.
    public var sha256: String
}
