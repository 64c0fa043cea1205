import FerryPluginAPI
import Foundation

/// `Backend.read` over HTTP, shared by the HTTP-based backends: one ranged `GET` whose
/// body is kept in memory, and only when it is the listed version's bytes.
/// - The range is conditional (`If-Range` with the listing's strong ETag, else its
///   modification date), so a file changed since the listing comes back whole and is
///   refused before a byte is kept (`HTTPRequest.range`).
/// - The `Content-Range` must name exactly the range asked for and the listed total.
/// - The body is bounded by the range's length.
/// A server that keeps its own times (a listing showing a preserved modification time
/// that `Last-Modified` does not carry) answers every such read with the whole file: the
/// caller sees a retryable `protocolViolation` and falls back to a whole download.
public enum RangedRead {
    public static func run(transport: CurlTransport, url: String, path: RelativePath, range: Range<Int64>,
                           expected: RemoteEntry, observer: any TransferObserver) async throws(BackendError) -> Data {
        guard !range.isEmpty else { return Data() }
        guard range.lowerBound >= 0, range.upperBound <= expected.size else {
            throw BackendError(.changedDuringTransfer, "bytes \(range.lowerBound)–\(range.upperBound) are past the listed "
                               + "\(expected.size) bytes", path: path.description, retryable: true)
        }
        var request = HTTPRequest(method: "GET", url: url, headers: validator(expected).map { [("If-Range", $0)] } ?? [],
                                  responseBody: .memory(limit: range.count),
                                  maxResponseBytes: Int64(range.count), range: range.lowerBound...(range.upperBound - 1))
        request.flushesResponseFile = false
        let response = try await transport.perform(request, observer: observer)
        guard response.status == 206 else {
            throw HTTPErrorMapping.error(status: response.status, method: "GET", path: path.description,
                                         retryAfter: response.header("retry-after"))
        }
        guard response.header("content-range").flatMap(RangedDownload.contentRangeTotal) == expected.size,
              response.body.count == range.count else {
            throw BackendError(.changedDuringTransfer, "the server's copy is no longer the \(expected.size) bytes listed",
                               path: path.description, retryable: true)
        }
        return response.body
    }

    /// What proves the listed version: a strong ETag, else the listed time.
    static func validator(_ expected: RemoteEntry) -> String? {
        if let etag = expected.etag, !etag.hasPrefix("W/") { return etag }
        return expected.modifiedNanos.map(HTTPDate.format(nanos:))
    }
}
