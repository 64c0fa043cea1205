import FerryPluginAPI
import Foundation

/// A `GET` into the core's partial file that continues an earlier attempt with `Range`
/// only when the server can prove it still has the same version, shared by every HTTP
/// based backend:
/// - the range is conditional (`If-Range` with a strong ETag, else the expected
///   modification date), so a changed file comes back whole and libcurl refuses the 200
///   (`CURLOPT_RESUME_FROM_LARGE`), upon which the file is fetched from the start;
/// - a validator can match while the file changed (servers without ETags compare dates
///   to the second), so the total size in `Content-Range` must also be the expected one;
/// - the body is bounded by the listed size: a server that sends more (a lie, or a file
///   that grew since the listing) has the transfer stopped before the excess is written,
///   with a retryable error.
public enum RangedDownload {
    /// A GET whose body goes into the request's partial file from `offset`, flushed as the
    /// request asks.
    private static func get(_ url: String, into request: DownloadRequest, from offset: Int64,
                            headers: [(String, String)] = [], maxResponseBytes: Int64) -> HTTPRequest {
        var get = HTTPRequest(method: "GET", url: url, headers: headers,
                              responseBody: .file(path: request.partialFile, offset: offset),
                              resumeFrom: offset > 0 ? offset : nil, maxResponseBytes: maxResponseBytes)
        get.flushesResponseFile = request.flush
        return get
    }

    public static func run(transport: CurlTransport, url: String, request: DownloadRequest,
                           observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        var offset = request.offset
        var headers: [(String, String)] = []
        if offset > 0 {
            if let etag = request.expected.etag, !etag.hasPrefix("W/") {
                headers.append(("If-Range", etag))
            } else if let modified = request.expected.modifiedNanos {
                headers.append(("If-Range", HTTPDate.format(nanos: modified)))
            } else {
                offset = 0
            }
        }
        // Never more than the listing promised: a body past it is cut off unwritten (the
        // free-space check before the download counted on the listed size).
        let listed = request.expected.size
        var response: HTTPResponse
        do {
            response = try await transport.perform(get(url, into: request, from: offset, headers: headers,
                                                       maxResponseBytes: listed - offset), observer: observer)
        } catch where offset > 0 && error.code == .protocolViolation && error.isRetryable {
            // The server sent the whole file (the remote changed, or it ignores ranges): start over.
            offset = 0
            response = try await transport.perform(get(url, into: request, from: 0, maxResponseBytes: listed),
                                                   observer: observer)
        }
        guard response.isSuccess || (offset > 0 && response.status == 416) else {
            throw HTTPErrorMapping.error(status: response.status, method: "GET", path: request.source.description,
                                         retryAfter: response.header("retry-after"))
        }
        // 416: the range starts past the end, so the file is not the one the partial bytes
        // came from (it shrank): fetch it from the start, like a total that differs.
        if offset > 0, response.status == 416
            || response.header("content-range").flatMap(contentRangeTotal).map({ $0 != request.expected.size }) == true {
            offset = 0
            response = try await transport.perform(get(url, into: request, from: 0, maxResponseBytes: listed),
                                                   observer: observer)
            guard response.isSuccess else {
                throw HTTPErrorMapping.error(status: response.status, method: "GET", path: request.source.description,
                                             retryAfter: response.header("retry-after"))
            }
        }
        let total = offset + response.bytesReceived
        let etag = response.header("etag")
        let modified = response.header("last-modified").flatMap(HTTPDate.parse)
        return DownloadResult(
            entry: RemoteEntry(path: request.source, kind: .file, size: total,
                               modifiedNanos: modified ?? request.expected.modifiedNanos, etag: etag ?? request.expected.etag),
            bytesReceived: response.bytesReceived, resumedFrom: offset)
    }

    /// The complete length from `Content-Range: bytes 10-19/20`; nil when unknown (`*`).
    public static func contentRangeTotal(_ value: String) -> Int64? {
        guard let slash = value.lastIndex(of: "/") else { return nil }
        return Int64(value[value.index(after: slash)...].trimmingCharacters(in: .whitespaces))
    }
}
