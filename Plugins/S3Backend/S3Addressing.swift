import CurlTransport
import FerryPluginAPI

/// Where a bucket's objects are: the endpoint, path-style (`http://host/BUCKET/KEY`, the
/// default for a configured endpoint: SeaweedFS, MinIO, Garage, Ceph RGW) or virtual-host
/// style (`https://BUCKET.host/KEY`, AWS's default), and the key prefix the remote's root
/// stands for.
public struct S3Addressing: Sendable, Equatable {
    /// `scheme://host[:port]` of the endpoint, without a trailing slash.
    public let endpoint: String
    public let bucket: String
    /// The keys of the remote's root start with this: empty, or ending in `/`.
    public let prefix: String
    public let virtualHost: Bool

    public init(endpoint: String, bucket: String, prefix: String, virtualHost: Bool) throws(BackendError) {
        let url = try ServerURL(base: endpoint)
        guard url.rootPath == "/" else {
            throw BackendError(.invalidName, "the S3 endpoint '\(endpoint)' has a path; give only scheme://host[:port] and put the folder in prefix")
        }
        guard Self.isValidBucketName(bucket) else {
            throw BackendError(.invalidName, "'\(bucket)' is not a valid bucket name (3-63 characters: a-z, 0-9, '.', '-')")
        }
        self.endpoint = url.origin
        self.bucket = bucket
        let trimmed = prefix.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        self.prefix = trimmed.isEmpty ? "" : trimmed + "/"
        self.virtualHost = virtualHost
    }

    static func isValidBucketName(_ name: String) -> Bool {
        (3...63).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2E || byte == 0x2D || byte == 0x5F
        }
    }

    /// The key of a file below the root.
    public func key(_ path: RelativePath) -> String {
        prefix + path.string
    }

    /// The key prefix of a folder's children: `PREFIX/folder/`, or the root's prefix.
    public func folderPrefix(_ path: RelativePath) -> String {
        path.isRoot ? prefix : prefix + path.string + "/"
    }

    /// The bucket's URL (for listings and bucket-level requests), with a query string.
    public func bucketURL(query: S3Query = S3Query()) -> String {
        base + "/" + query.encoded
    }

    /// An object's URL: every key segment percent-encoded, `/` kept.
    public func objectURL(key: String, query: S3Query = S3Query()) -> String {
        base + "/" + Self.encodedKey(key) + query.encoded
    }

    /// The value of `x-amz-copy-source` for a key of this bucket.
    public func copySource(key: String) -> String {
        "/" + bucket + "/" + Self.encodedKey(key)
    }

    static func encodedKey(_ key: String) -> String {
        key.split(separator: "/", omittingEmptySubsequences: false).map { PercentEncoding.encode(String($0)) }
            .joined(separator: "/")
    }

    /// The endpoint and bucket part of every URL, without a trailing slash.
    private var base: String {
        if virtualHost, let schemeEnd = endpoint.range(of: "://") {
            return endpoint[..<schemeEnd.upperBound] + bucket + "." + endpoint[schemeEnd.upperBound...]
        }
        return endpoint + "/" + bucket
    }

    /// A secret-free name for messages: `s3://BUCKET/PREFIX at ENDPOINT`.
    public var displayName: String {
        "s3://" + bucket + "/" + prefix + " at " + endpoint
    }
}

/// A query string whose canonical form (RFC 3986 encoding, sorted by name, `name=` for an
/// empty value) is also the form sent: libcurl 7.88 signs the query as it stands.
public struct S3Query: Sendable, Equatable {
    private var items: [(String, String)] = []

    public init(_ items: [(String, String)] = []) {
        self.items = items
    }

    public static func == (lhs: S3Query, rhs: S3Query) -> Bool { lhs.encoded == rhs.encoded }

    public var encoded: String {
        guard !items.isEmpty else { return "" }
        let pairs = items.map { (PercentEncoding.encode($0.0), PercentEncoding.encode($0.1)) }
            .sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
        return "?" + pairs.map { $0.0 + "=" + $0.1 }.joined(separator: "&")
    }
}
