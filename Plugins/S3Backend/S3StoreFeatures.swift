/// What `ferry plugins --probe` learns by asking a store, beyond what every S3 store does.
public struct S3StoreFeatures: Sendable, Equatable {
    /// ListObjectsV2 (`list-type=2`) answers with a V2 listing.
    public var listObjectsV2: Bool
    /// `If-None-Match: *` on PUT is refused (412) for a key that exists: two machines
    /// writing one new key cannot overwrite each other silently.
    public var conditionalWrites: Bool
    /// A completed multipart upload's ETag is the MD5 of its parts' MD5s, `-N`: Ferry
    /// can check a large upload end to end.
    public var multipartETags: Bool
    /// An object's `x-amz-meta-*` headers come back as they were sent: the modification
    /// time Ferry keeps there survives. Some gateways drop them.
    public var userMetadata: Bool

    public init(listObjectsV2: Bool, conditionalWrites: Bool, multipartETags: Bool, userMetadata: Bool = true) {
        self.listObjectsV2 = listObjectsV2
        self.conditionalWrites = conditionalWrites
        self.multipartETags = multipartETags
        self.userMetadata = userMetadata
    }
}
