/// One file or folder as a backend reports it.
public struct RemoteEntry: Hashable, Sendable {
    public enum Kind: String, Sendable, Codable {
        case file
        case directory
    }

    public var path: RelativePath
    public var kind: Kind
    public var size: Int64
    /// Modification time in nanoseconds since 1970, when the backend knows it.
    public var modifiedNanos: Int64?
    /// An opaque version tag (HTTP ETag, or a backend's own), when the backend has one.
    public var etag: String?

    public init(path: RelativePath, kind: Kind, size: Int64, modifiedNanos: Int64?, etag: String? = nil) {
        self.path = path
        self.kind = kind
        self.size = size
        self.modifiedNanos = modifiedNanos
        self.etag = etag
    }
}
