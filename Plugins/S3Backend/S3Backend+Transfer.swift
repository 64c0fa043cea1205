import CurlTransport
import FerryPluginAPI
import FerrySystem
import Foundation

extension S3Backend {
    /// Files above the multipart threshold go in parts (S3Backend+Multipart.swift); the
    /// others in one `PUT` of the whole file to its final key, with `Content-MD5` (the store refuses
    /// other bytes) and the modification time in `x-amz-meta-mtime`; the answer's ETag
    /// must be the MD5 Ferry computed.
    public func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        if request.size >= directUploadLimit {
            try await checkSource(request)
            let result = try await uploadInParts(request, observer: observer)
            let backend = self
            await BlockingIO.run { () throws(Never) in backend.checkUserMetadataNow(request.destination) }
            return result
        }
        let backend = self
        return try await BlockingIO.run { () throws(BackendError) in try backend.putNow(request, observer: observer) }
    }

    /// Files below this go in one `PUT`; the others in parts.
    public var directUploadLimit: Int64 { min(multipart.threshold, Self.maxSinglePutBytes) + 1 }

    /// Every file under `directUploadLimit` can go now: a `PUT` needs nothing first.
    public func uploadNow(_ request: UploadRequest, observer: any TransferObserver) throws(BackendError) -> UploadResult? {
        try putNow(request, observer: observer)
    }

    /// One `PUT` on the calling thread: the hash is of the version the job planned only if
    /// the file is that version before and after, and the store refuses a body that is not
    /// what was hashed (Content-MD5).
    func putNow(_ request: UploadRequest, observer: any TransferObserver) throws(BackendError) -> UploadResult {
        let path = request.destination
        try Self.checkSourceNow(request)
        let digest = try FileDigest.md5Now(path: request.source, length: request.size)
        try Self.checkSourceNow(request)
        var headers = [("Content-MD5", digest.base64), ("Content-Type", "application/octet-stream"),
                       ("x-amz-meta-mtime", S3ModificationTime.header(nanos: request.modifiedNanos))]
        // A key the listing did not have is created only if it is still free: another
        // machine's new object is never overwritten silently (stores without conditional
        // writes ignore the header).
        if request.expectsNewFile { headers.append(("If-None-Match", "*")) }
        // A version another writer put there since the listing is never overwritten unseen
        // where the file's versions are kept (stores without conditional writes ignore it).
        if let replaced = Self.replaceCondition(request) { headers.append(("If-Match", replaced)) }
        let put = self.request("PUT", url: addressing.objectURL(key: addressing.key(path)), headers: headers,
                               body: .file(path: request.source, offset: 0, length: request.size))
        let response = try transport.performNow(put, observer: observer)
        if request.expectsNewFile, response.status == 412 { throw .anotherWriterCreated(path.description, cause: "HTTP 412 on PUT with If-None-Match: *") }
        if Self.replaceCondition(request) != nil, response.status == 412 {
            throw .anotherWriterReplaced(path.description, cause: "HTTP 412 on PUT with If-Match")
        }
        guard response.isSuccess else { throw failure(response, method: "PUT", path: path) }
        let etag = response.header("etag").map(ETag.normalized)
        if let etag, let sent = ETag.md5Hex(etag), sent != digest.hex {
            throw BackendError(.protocolViolation, "the store's ETag is not the MD5 of the bytes sent", path: path.description,
                               cause: "ETag \(etag), MD5 \(digest.hex)", retryable: true)
        }
        checkUserMetadataNow(path)
        return UploadResult(entry: RemoteEntry(path: path, kind: .file, size: request.size, modifiedNanos: request.modifiedNanos,
                                               etag: etag ?? ETag.normalized(digest.hex)),
                            bytesSent: response.bytesSent, resumedFrom: 0, verifiedSource: true)
    }

    /// After the process's first upload: one `HEAD` tells whether the store kept the time
    /// (`UserMetadataCheck`). A failed read-back decides nothing; the next upload tries.
    func checkUserMetadataNow(_ path: RelativePath) {
        guard userMetadata.claim() else { return }
        let head = request("HEAD", url: addressing.objectURL(key: addressing.key(path)), responseBody: .discard)
        let response = try? transport.performNow(head, observer: NullTransferObserver())
        let kept = response.flatMap { $0.status == 200 ? $0.header("x-amz-meta-mtime") != nil : nil }
        userMetadata.record(kept: kept, remote: displayName, path: path.description)
    }


    /// Refuses a source that is no longer the version the job was planned for.
    func checkSource(_ request: UploadRequest) async throws(BackendError) {
        try await BlockingIO.run { () throws(BackendError) in try Self.checkSourceNow(request) }
    }

    /// The same on the calling thread, which must be a blocking one (`BlockingIO`).
    static func checkSourceNow(_ request: UploadRequest) throws(BackendError) {
        let source = request.source
        let metadata = try BackendError.catching { try LocalFileSystem.metadata(source) }
        guard let metadata, metadata.kind == .file else {
            throw BackendError(.changedDuringTransfer, "the file is gone or is no longer a file", path: source)
        }
        guard metadata.size == request.size, metadata.modifiedNanos == request.modifiedNanos else {
            throw BackendError(.changedDuringTransfer, "the file changed since it was scanned", path: source,
                               cause: "size \(metadata.size), expected \(request.size)")
        }
    }

    /// A large object over several ranged streams (`ParallelRangedDownload`, `If-Range` on
    /// its ETag), as rclone does; the time comes from the `HEAD`'s metadata. Smaller ones,
    /// and any sign that ranges do not hold, go in one stream.
    public func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        let backend = self
        let url = addressing.objectURL(key: addressing.key(request.source))
        return try await ParallelRangedDownload.run(
            transport: transport, url: url, request: request, observer: observer,
            dialect: ParallelRangedDownload.Dialect(
                headers: commonHeaders,
                entry: { head, request in backend.entry(request.source, response: head, size: request.expected.size) },
                singleStream: { request throws(BackendError) in try await backend.downloadInOneStream(request, observer: observer) }))
    }

    /// `GET` into the partial file; a partial file is continued with `Range` only while
    /// the object is still the listed version (`If-Match` on its ETag), else fetched whole.
    func downloadInOneStream(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        let url = addressing.objectURL(key: addressing.key(request.source))
        let listed = request.expected.size
        if request.offset > 0, let etag = request.expected.etag {
            do throws(BackendError) {
                let response = try await send(
                    "GET", url: url, headers: [("If-Match", etag)],
                    responseBody: .file(path: request.partialFile, offset: request.offset), resumeFrom: request.offset,
                    maxResponseBytes: listed - request.offset, flushesResponseFile: request.flush, observer: observer)
                if response.status == 206 {
                    return result(request, response: response, offset: request.offset)
                }
                // 412: another version; 416: the object is shorter than the partial file.
                guard response.status == 412 || response.status == 416 || response.status == 200 else {
                    throw await failure(ofDownload: response, request, offset: request.offset)
                }
            } catch where error.code == .protocolViolation && error.isRetryable {
                // The store sent the whole object instead of the range: fetch it from the start.
            }
        }
        let response = try await send("GET", url: url, responseBody: .file(path: request.partialFile, offset: 0),
                                      maxResponseBytes: max(listed, 0), flushesResponseFile: request.flush,
                                      observer: observer)
        guard response.status == 200 else { throw await failure(ofDownload: response, request, offset: 0) }
        return result(request, response: response, offset: 0)
    }

    /// One range of an object, only from the listed version (`If-Match` on its ETag; 412
    /// when it changed); the `Content-Range` must name the range and the listed size.
    public func read(_ path: RelativePath, range: Range<Int64>, expected: RemoteEntry,
                     observer: any TransferObserver) async throws(BackendError) -> Data {
        guard !range.isEmpty else { return Data() }
        let changed = BackendError(.changedDuringTransfer, "the object is no longer the \(expected.size) bytes listed",
                                   path: path.description, retryable: true)
        guard range.lowerBound >= 0, range.upperBound <= expected.size else { throw changed }
        var get = request("GET", url: addressing.objectURL(key: addressing.key(path)),
                          headers: expected.etag.map { [("If-Match", $0)] } ?? [],
                          responseBody: .memory(limit: range.count), maxResponseBytes: Int64(range.count))
        get.range = range.lowerBound...(range.upperBound - 1)
        let response = try await transport.perform(get, observer: observer)
        if response.status == 412 || response.status == 416 { throw changed }
        guard response.status == 206 else { throw failure(response, method: "GET", path: path) }
        guard response.header("content-range").flatMap(RangedDownload.contentRangeTotal) == expected.size,
              response.body.count == range.count else { throw changed }
        return response.body
    }

    /// The error of a failed `GET`, whose body went into the partial file: taken back out.
    private func failure(ofDownload response: HTTPResponse, _ request: DownloadRequest, offset: Int64) async -> BackendError {
        var answer = response
        answer.body = await PartialFileErrorBody.takeBack(request.partialFile, from: offset)
        return failure(answer, method: "GET", path: request.source)
    }

    private func result(_ request: DownloadRequest, response: HTTPResponse, offset: Int64) -> DownloadResult {
        DownloadResult(entry: entry(request.source, response: response, size: offset + response.bytesReceived),
                       bytesReceived: response.bytesReceived, resumedFrom: offset)
    }
}

extension S3Backend: DirectUploadBackend {
    /// The `If-Match` value a replacing write carries (`UploadRequest.replacedETag`); nil
    /// for a new name, which has its own condition.
    static func replaceCondition(_ request: UploadRequest) -> String? {
        guard !request.expectsNewFile, let etag = request.replacedETag else { return nil }
        return ETag.normalized(etag)
    }
}
