import FerryPluginAPI

/// One folder as a `PROPFIND Depth: 1` described it.
public struct DAVListing: Sendable, Equatable {
    /// The collection itself, as the server described it (nil if it was not in the response).
    public var collectionETag: String?
    /// The direct children, sorted by path.
    public var children: [RemoteEntry]

    public init(collectionETag: String?, children: [RemoteEntry]) {
        self.collectionETag = collectionETag
        self.children = children
    }
}
