import CurlTransport
import FerryPluginAPI
import Foundation

/// A bucket (and a key prefix in it) on an S3-compatible store: AWS S3, SeaweedFS, MinIO,
/// Garage, Ceph RGW.
///
/// - Requests are signed with SigV4 by libcurl (`CURLOPT_AWS_SIGV4`), bodies streamed
///   from files with `x-amz-content-sha256: UNSIGNED-PAYLOAD`; integrity comes from
///   `Content-MD5`, which the store checks, and the ETag it answers, which Ferry checks.
/// - Folders are key prefixes: a listing is ListObjectsV2 with delimiter `/`, page by page
///   (continuation tokens). An empty folder made by `makeDirectory` is a zero-byte marker
///   object `KEY/`.
/// - Uploads are one `PUT` to the final key (S3 makes an object visible whole or not at
///   all), with the modification time in `x-amz-meta-mtime` (seconds with nine decimals, as rclone writes it), which `HEAD`
///   and `GET` give back, so pull restores it.
/// - Downloads continue a partial file with a `Range` guarded by `If-Match` on the listed
///   ETag; a changed object is fetched from the start.
/// - Move and copy are server-side (`CopyObject`, keeping the metadata; a move then deletes
///   the source).
public struct S3Backend: Backend {
    let transport: CurlTransport
    public let configuration: S3RemoteConfiguration
    var addressing: S3Addressing { configuration.addressing }
    /// Folders whose marker this backend has written or seen, so each is written once.
    let knownFolders = KnownFolders()
    /// Set once the store refuses DeleteObjects; deletes go one key at a time after that.
    let deleteObjectsRefusal = DeleteObjectsRefusal()
    /// Whether the store keeps `x-amz-meta-mtime`: read back after the first upload.
    let userMetadata = UserMetadataCheck()
    /// Keys per listing page (`max-keys`); nil leaves it to the store (1,000 on AWS).
    var listPageSize: Int?
    public let multipart: MultipartSettings

    /// Bytes kept in memory of one listing page or error answer (a page of 1,000 keys is
    /// a few hundred KiB).
    static let maxAnswerBytes = 8 << 20
    /// The largest object one `PUT` may create (S3's limit).
    public static let maxSinglePutBytes: Int64 = 5 << 30

    public init(configuration: S3RemoteConfiguration, multipart: MultipartSettings = MultipartSettings(),
                connectTimeout: Int? = nil, stallTimeout: Int? = nil, insecure: Bool = false,
                downloadStreams: Int = CurlTransportSettings().downloadStreams,
                multiStreamCutoff: Int64 = CurlTransportSettings().multiStreamCutoff) {
        self.configuration = configuration
        self.multipart = multipart
        var settings = CurlTransportSettings()
        settings.downloadStreams = downloadStreams
        settings.multiStreamCutoff = multiStreamCutoff
        if let connectTimeout { settings.connectTimeout = max(1, connectTimeout) }
        if let stallTimeout { settings.stallTimeout = max(1, stallTimeout) }
        settings.caFile = configuration.caFile
        settings.insecure = insecure
        // S3 answers with redirects only for a wrong region; following one would resend
        // the signed request to another host.
        settings.maxRedirects = 0
        let credentials = configuration.credentials
        settings.credentials = .awsSigV4(provider: "aws:amz:\(configuration.region):s3",
                                         accessKey: credentials.accessKeyID, secretKey: credentials.secretAccessKey)
        transport = CurlTransport(settings: settings, server: configuration.addressing.endpoint)
    }

    public var displayName: String { addressing.displayName }

    public var capabilities: BackendCapabilities {
        var capabilities = Self.staticCapabilities
        // A store without DeleteObjects deletes a key per request: the core then sends
        // deletes as separate jobs, several at once, rather than a batch one by one.
        if deleteObjectsRefusal.isRefused { capabilities.maxDeleteBatch = 1 }
        if userMetadata.dropped { capabilities.preservesModificationTime = false }
        return capabilities
    }

    static let staticCapabilities = BackendCapabilities(
        resumableUpload: true, rangedDownload: true, rangedRead: true, serverSideMove: true, preservesModificationTime: true,
        listingHasETags: true,
        atomicUpload: true, serverSideCopy: true, maxDeleteBatch: DeleteObjectsMessage.maxKeys)

    // MARK: Requests

    /// Headers every request carries: the payload is not hashed into the signature (bodies
    /// are streamed; Content-MD5 protects them), and an STS session's token.
    var commonHeaders: [(String, String)] {
        var headers = [("x-amz-content-sha256", "UNSIGNED-PAYLOAD")]
        if let token = configuration.credentials.sessionToken { headers.append(("x-amz-security-token", token)) }
        return headers
    }

    func send(_ method: String, url: String, headers: [(String, String)] = [], body: HTTPRequest.Body = .none,
              responseBody: HTTPRequest.ResponseBody = .memory(limit: S3Backend.maxAnswerBytes),
              resumeFrom: Int64? = nil, maxResponseBytes: Int64? = nil, flushesResponseFile: Bool = true,
              observer: any TransferObserver = NullTransferObserver()) async throws(BackendError) -> HTTPResponse {
        var request = request(method, url: url, headers: headers, body: body, responseBody: responseBody,
                              resumeFrom: resumeFrom, maxResponseBytes: maxResponseBytes)
        request.flushesResponseFile = flushesResponseFile
        return try await transport.perform(request, observer: observer)
    }

    /// A request to the store, with the headers every request carries.
    func request(_ method: String, url: String, headers: [(String, String)] = [], body: HTTPRequest.Body = .none,
                 responseBody: HTTPRequest.ResponseBody = .memory(limit: S3Backend.maxAnswerBytes),
                 resumeFrom: Int64? = nil, maxResponseBytes: Int64? = nil) -> HTTPRequest {
        HTTPRequest(method: method, url: url, headers: commonHeaders + headers, body: body,
                    responseBody: responseBody, resumeFrom: resumeFrom, maxResponseBytes: maxResponseBytes)
    }

    /// The classified error of a failed answer.
    func failure(_ response: HTTPResponse, method: String, path: RelativePath) -> BackendError {
        S3ErrorResponse.error(status: response.status, body: response.body, method: method, path: path.description,
                              retryAfter: response.header("retry-after"), addressing: addressing)
    }

    // MARK: Listing

    public func list(_ directory: RelativePath) async throws(BackendError) -> [RemoteEntry] {
        let prefix = addressing.folderPrefix(directory)
        var entries: [RemoteEntry] = []
        var sawAnything = false
        var token: String?
        var tokensSeen: Set<String> = []
        repeat {
            let page = try await listPage(prefix: prefix, delimiter: "/", token: token, maxKeys: listPageSize, path: directory)
            for object in page.objects {
                sawAnything = true
                let name = String(object.key.dropFirst(prefix.count))
                // The folder's own marker, and keys no file could be named after ("a//b").
                guard object.key.hasPrefix(prefix), !name.isEmpty, !name.contains("/"),
                      let path = try? directory.appending(name) else { continue }
                entries.append(RemoteEntry(path: path, kind: .file, size: object.size, modifiedNanos: object.lastModifiedNanos,
                                           etag: object.etag))
            }
            for common in page.commonPrefixes {
                sawAnything = true
                guard common.hasPrefix(prefix), common.hasSuffix("/") else { continue }
                let name = String(common.dropFirst(prefix.count).dropLast())
                guard !name.isEmpty, !name.contains("/"), let path = try? directory.appending(name) else { continue }
                entries.append(RemoteEntry(path: path, kind: .directory, size: 0, modifiedNanos: nil))
            }
            if entries.count > ListingBounds.standard.maxEntries {
                throw BackendError(.protocolViolation, "the folder lists more than \(ListingBounds.standard.maxEntries) entries",
                                   path: directory.description)
            }
            token = page.isTruncated ? page.nextContinuationToken : nil
            if let token, !tokensSeen.insert(token).inserted {
                throw BackendError(.protocolViolation, "the store repeats a continuation token; the listing would never end",
                                   path: directory.description)
            }
        } while token != nil
        if !sawAnything && !directory.isRoot {
            throw BackendError(.notFound, "no such folder in the store", path: directory.description)
        }
        if !directory.isRoot { knownFolders.insert(directory) }
        return entries
    }

    /// One ListObjectsV2 page of keys starting with `prefix`.
    func listPage(prefix: String, delimiter: String?, token: String?, maxKeys: Int? = nil,
                  path: RelativePath) async throws(BackendError) -> ListObjectsPage {
        var items = [("list-type", "2"), ("prefix", prefix)]
        if let delimiter { items.append(("delimiter", delimiter)) }
        if let token { items.append(("continuation-token", token)) }
        if let maxKeys { items.append(("max-keys", String(maxKeys))) }
        let response = try await send("GET", url: addressing.bucketURL(query: S3Query(items)))
        guard response.status == 200 else { throw failure(response, method: "GET (ListObjectsV2)", path: path) }
        do {
            return try ListObjectsPage(parsing: response.body)
        } catch {
            var error = error
            error.path = path.description
            throw error
        }
    }

    public func stat(_ path: RelativePath) async throws(BackendError) -> RemoteEntry? {
        if path.isRoot { return RemoteEntry(path: .root, kind: .directory, size: 0, modifiedNanos: nil) }
        let response = try await send("HEAD", url: addressing.objectURL(key: addressing.key(path)), responseBody: .discard)
        if response.status == 200 {
            return entry(path, response: response, size: Int64(response.header("content-length") ?? "") ?? 0)
        }
        guard response.status == 404 else { throw failure(response, method: "HEAD", path: path) }
        // Not an object: a folder when any key starts with `path/`.
        let page = try await listPage(prefix: addressing.folderPrefix(path), delimiter: nil, token: nil, maxKeys: 1, path: path)
        guard !page.objects.isEmpty || !page.commonPrefixes.isEmpty else { return nil }
        return RemoteEntry(path: path, kind: .directory, size: 0, modifiedNanos: nil)
    }

    /// A file's entry from the headers of a `HEAD` or `GET`: the modification time Ferry
    /// stored (`x-amz-meta-mtime`), else `Last-Modified`.
    func entry(_ path: RelativePath, response: HTTPResponse, size: Int64) -> RemoteEntry {
        let stored = response.header("x-amz-meta-mtime").flatMap(S3ModificationTime.nanos(header:))
        let modified = stored ?? response.header("last-modified").flatMap(HTTPDate.parse)
        return RemoteEntry(path: path, kind: .file, size: size, modifiedNanos: modified,
                           etag: response.header("etag").map(ETag.normalized))
    }

    /// Any answer from the bucket (even a refusal) shows the store is there.
    public func checkReachable() async throws(BackendError) {
        _ = try await send("HEAD", url: addressing.bucketURL(), responseBody: .discard)
    }
}
