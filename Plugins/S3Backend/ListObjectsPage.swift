import FerryPluginAPI
import Foundation

/// One page of a ListObjectsV2 answer: the objects and common prefixes ("folders") under
/// the listed prefix, and the token for the next page.
public struct ListObjectsPage: Sendable, Equatable {
    public struct Object: Sendable, Equatable {
        public var key: String
        public var size: Int64
        public var etag: String?
        public var lastModifiedNanos: Int64?
    }

    public var objects: [Object] = []
    public var commonPrefixes: [String] = []
    public var isTruncated = false
    public var nextContinuationToken: String?

    public init(objects: [Object] = [], commonPrefixes: [String] = [], isTruncated: Bool = false, nextContinuationToken: String? = nil) {
        self.objects = objects
        self.commonPrefixes = commonPrefixes
        self.isTruncated = isTruncated
        self.nextContinuationToken = nextContinuationToken
    }

    /// Parses a `ListBucketResult`; a body that is not one is a protocol violation.
    public init(parsing body: Data) throws(BackendError) {
        var page = ListObjectsPage()
        var object = Object(key: "", size: -1)
        let root = S3XMLReader.read(body, field: { field in
            switch field.path {
            case ["Contents", "Key"]: object.key = field.text
            case ["Contents", "Size"]: object.size = Int64(field.text) ?? -1
            case ["Contents", "ETag"]: object.etag = ETag.normalized(field.text)
            case ["Contents", "LastModified"]: object.lastModifiedNanos = ISO8601Time.nanos(field.text)
            case ["CommonPrefixes", "Prefix"]: page.commonPrefixes.append(field.text)
            case ["IsTruncated"]: page.isTruncated = field.text == "true"
            case ["NextContinuationToken"]: page.nextContinuationToken = field.text
            default: break
            }
        }, ended: { path in
            if path == ["Contents"] {
                if !object.key.isEmpty, object.size >= 0 { page.objects.append(object) }
                object = Object(key: "", size: -1)
            }
        })
        guard root == "ListBucketResult" else {
            throw BackendError(.protocolViolation, "the store's listing is not a ListObjectsV2 answer")
        }
        if page.isTruncated && page.nextContinuationToken == nil {
            throw BackendError(.protocolViolation, "the store's listing is truncated but gives no continuation token")
        }
        self = page
    }
}
