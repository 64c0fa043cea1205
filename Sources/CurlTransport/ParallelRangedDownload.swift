import FerryPluginAPI
import FerrySystem
import Synchronization

/// A large file fetched over several connections at once, each a series of ranged `GET`s
/// for one segment at a time written in place into the core's partial file: on a fast
/// link, one stream is bounded by one connection and one thread's copying.
///
/// Safety, segment by segment:
/// - a `HEAD` first: the server must say `Accept-Ranges: bytes`, give the listed size
///   and a validator (a strong ETag, else `Last-Modified`); otherwise one stream
///   (`RangedDownload`) does the whole job;
/// - every segment's `GET` carries `If-Range` with that validator, so a file replaced
///   meanwhile comes back whole (a 200) and is refused before a byte is written, and its
///   `Content-Range` must name the segment and the listed total; on any such sign of
///   change, what the streams wrote is dropped and the file is fetched again from the
///   start in one stream: one response, one version, never a mix;
/// - continuing an earlier attempt (`request.offset > 0`) needs the `HEAD` to show the
///   listed version (as `RangedDownload`'s `If-Range` would), or it starts at 0;
/// - the partial file has holes while the streams work, so a `PartialFileLedger` beside
///   it says how much of it is good (raised only after a segment's bytes are on disk,
///   `OpenFile.flushRange`, with one fsync of the whole file at the end); a stream that
///   fails cuts the file back to that and removes the ledger, and after a SIGKILL the
///   core does the same before it continues.
public enum ParallelRangedDownload {
    /// What a backend with its own protocol (S3) changes: headers every request carries,
    /// how the downloaded file's entry is read from the `HEAD` (S3 keeps the time in its
    /// metadata), and the one-stream download used when several streams do not apply.
    public struct Dialect: Sendable {
        public var headers: [(String, String)]
        public var entry: @Sendable (_ head: HTTPResponse, _ request: DownloadRequest) -> RemoteEntry
        public var singleStream: @Sendable (DownloadRequest) async throws(BackendError) -> DownloadResult

        public init(headers: [(String, String)],
                    entry: @escaping @Sendable (_ head: HTTPResponse, _ request: DownloadRequest) -> RemoteEntry,
                    singleStream: @escaping @Sendable (DownloadRequest) async throws(BackendError) -> DownloadResult) {
            self.headers = headers
            self.entry = entry
            self.singleStream = singleStream
        }

        /// Plain HTTP: no extra headers, the time from `Last-Modified`, `RangedDownload`.
        static func http(transport: CurlTransport, url: String, observer: any TransferObserver) -> Dialect {
            Dialect(headers: [], entry: { head, request in
                RemoteEntry(path: request.source, kind: .file, size: request.expected.size,
                            modifiedNanos: head.header("last-modified").flatMap(HTTPDate.parse) ?? request.expected.modifiedNanos,
                            etag: head.header("etag") ?? request.expected.etag)
            }, singleStream: { request throws(BackendError) in
                try await RangedDownload.run(transport: transport, url: url, request: request, observer: observer)
            })
        }
    }

    public static func run(transport: CurlTransport, url: String, request: DownloadRequest,
                           observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        try await run(transport: transport, url: url, request: request, observer: observer,
                      dialect: .http(transport: transport, url: url, observer: observer))
    }

    public static func run(transport: CurlTransport, url: String, request: DownloadRequest, observer: any TransferObserver,
                           dialect proto: Dialect) async throws(BackendError) -> DownloadResult {
        let settings = transport.settings
        let size = request.expected.size
        guard settings.downloadStreams > 1, size >= settings.multiStreamCutoff,
              size - request.offset > SegmentQueue.segmentLength(remaining: size - request.offset, streams: settings.downloadStreams),
              let head = try? await transport.perform(HTTPRequest(method: "HEAD", url: url, headers: proto.headers, responseBody: .discard)),
              let validator = rangeValidator(head, size: size) else {
            return try await proto.singleStream(request)
        }
        // The partial bytes belong to the listed version: keep them only if the server
        // still has it (RangedDownload's If-Range would decide the same).
        let start = request.offset > 0 && showsListedVersion(head, request.expected) ? request.offset : 0
        let partialFile = request.partialFile
        let ledger = try await BlockingIO.run { () throws(BackendError) -> LedgerFile in
            try BackendError.catching { try OpenFile(partialFile, mode: .writeExisting).truncate(to: start) }
            return try LedgerFile(partialFile: partialFile, validBytes: start)
        }

        let streams = settings.downloadStreams
        let queue = SharedSegmentQueue(SegmentQueue(from: start, size: size,
                                                    segmentLength: SegmentQueue.segmentLength(remaining: size - start, streams: streams)))
        let streamObserver = StreamObserver(observer)
        let job = SegmentJob(transport: transport, url: url, headers: proto.headers, path: request.source.description,
                             partialFile: partialFile, size: size, validator: validator, observer: streamObserver)
        let failures = await withTaskGroup(of: BackendError?.self) { group in
            for _ in 0..<streams {
                group.addTask {
                    // A segment is put on disk (and counted) while the stream already
                    // fetches the next one; at most one waits per stream.
                    var recording: Task<BackendError?, Never>?
                    do throws(BackendError) {
                        while let segment = queue.next() {
                            try await job.fetch(segment)
                            if let error = await recording?.value { throw error }
                            recording = Task { await job.record(segment, in: queue, ledger: ledger) }
                        }
                        if let error = await recording?.value { throw error }
                        return nil
                    } catch {
                        // Counted or not, it is done before the good prefix is read.
                        _ = await recording?.value
                        // A stream already told to stop fails with whatever its abort
                        // looked like to libcurl: an echo of the cause, not a cause.
                        if streamObserver.isCancelled { return BackendError(.cancelled, "transfer cancelled", path: job.path) }
                        // The other streams stop at their next chunk.
                        streamObserver.stop()
                        return error
                    }
                }
            }
            var failures: [BackendError] = []
            for await failure in group { if let failure { failures.append(failure) } }
            return failures
        }
        let validBytes = queue.validBytes

        guard let failure = failures.first(where: { $0.code != .cancelled }) ?? failures.first else {
            // Each range is on disk; one fsync makes the file's metadata so too, before
            // the ledger stops vouching for it.
            try await BlockingIO.run { () throws(BackendError) in
                try BackendError.catching { try OpenFile(partialFile, mode: .writeExisting).sync() }
                try ledger.remove()
            }
            return DownloadResult(entry: proto.entry(head, request), bytesReceived: size - start, resumedFrom: start)
        }
        // Whatever went wrong, the file keeps only its good prefix and says so by its size.
        let changed = failures.contains(where: isChangeSign)
        let keep = changed ? 0 : validBytes
        try await BlockingIO.run { () throws(BackendError) in
            try BackendError.catching {
                let file = try OpenFile(partialFile, mode: .writeExisting)
                try file.truncate(to: keep)
                try file.sync()
            }
            try ledger.remove()
        }
        guard changed, !observer.isCancelled else { throw failure }
        // Another version, or a server that takes ranges only in words: one stream, from the start.
        return try await proto.singleStream(
            DownloadRequest(source: request.source, partialFile: partialFile, offset: 0, expected: request.expected))
    }

    /// What every segment's `If-Range` carries: a strong ETag, else the `Last-Modified`
    /// date; nil when the `HEAD` shows no range support, another size or no validator.
    static func rangeValidator(_ head: HTTPResponse, size: Int64) -> String? {
        guard head.status == 200,
              head.header("accept-ranges")?.lowercased().split(separator: ",")
                .contains(where: { $0.trimmingCharacters(in: .whitespaces) == "bytes" }) == true,
              head.header("content-length").flatMap({ Int64($0.trimmingCharacters(in: .whitespaces)) }) == size else { return nil }
        if let etag = head.header("etag"), !etag.hasPrefix("W/") { return etag }
        return head.header("last-modified").flatMap { HTTPDate.parse($0) != nil ? $0 : nil }
    }

    /// True when the `HEAD` shows the version the listing saw: its strong ETag, else its
    /// modification time to the second (what an `If-Range` date compares).
    static func showsListedVersion(_ head: HTTPResponse, _ expected: RemoteEntry) -> Bool {
        if let etag = expected.etag, !etag.hasPrefix("W/") { return head.header("etag") == etag }
        guard let listed = expected.modifiedNanos,
              let served = head.header("last-modified").flatMap(HTTPDate.parse) else { return false }
        return floorSeconds(listed) == floorSeconds(served)
    }

    private static func floorSeconds(_ nanos: Int64) -> Int64 {
        nanos >= 0 ? nanos / 1_000_000_000 : (nanos - 999_999_999) / 1_000_000_000
    }

    /// The signs that the server's file is not the one the segments were asked of (or that
    /// it ignores ranges after all): starting over in one stream, not retrying, is the cure.
    static func isChangeSign(_ error: BackendError) -> Bool {
        error.code == .protocolViolation || error.code == .changedDuringTransfer
    }
}

/// The `SegmentQueue` the streams share.
private final class SharedSegmentQueue: Sendable {
    private let state: Mutex<SegmentQueue>

    init(_ queue: SegmentQueue) { state = Mutex(queue) }

    func next() -> ClosedRange<Int64>? { state.withLock { $0.next() } }

    /// Records a finished segment; returns the new good prefix when it moved.
    func finished(_ segment: ClosedRange<Int64>) -> Int64? {
        state.withLock { queue in queue.finished(segment) ? queue.validBytes : nil }
    }

    var validBytes: Int64 { state.withLock { $0.validBytes } }
}

/// One segment's `GET`, the same for every stream.
private struct SegmentJob: Sendable {
    let transport: CurlTransport
    let url: String
    let headers: [(String, String)]
    /// The remote path, for messages.
    let path: String
    let partialFile: String
    let size: Int64
    let validator: String
    let observer: StreamObserver

    func fetch(_ segment: ClosedRange<Int64>) async throws(BackendError) {
        let length = segment.upperBound - segment.lowerBound + 1
        let response = try await transport.perform(HTTPRequest(
            method: "GET", url: url, headers: headers + [("If-Range", validator)],
            responseBody: .fileRegion(path: partialFile, offset: segment.lowerBound),
            maxResponseBytes: length, range: segment), observer: observer)
        guard response.status == 206 else {
            // 412 or 416: the validator or the size no longer holds.
            if response.status == 412 || response.status == 416 {
                throw BackendError(.changedDuringTransfer, "the file changed on the server during the download", path: path, retryable: true)
            }
            throw HTTPErrorMapping.error(status: response.status, method: "GET", path: path, retryAfter: response.header("retry-after"))
        }
        guard response.header("content-range").flatMap(RangedDownload.contentRangeTotal) == size else {
            throw BackendError(.changedDuringTransfer, "the file on the server no longer has the listed size", path: path, retryable: true)
        }
        guard response.bytesReceived == length else {
            throw BackendError(.connectionLost, "the server sent \(response.bytesReceived) of \(length) bytes of a range",
                               path: path, retryable: true)
        }
    }

    /// Puts a fetched segment on disk, then counts it in the queue and the ledger: the
    /// ledger never vouches for bytes that are only in memory. Flushes this range only
    /// (an fsync would also wait for what the other streams are writing), then lets the
    /// kernel drop its pages, as `WriteBehind` does for a local copy.
    func record(_ segment: ClosedRange<Int64>, in queue: SharedSegmentQueue, ledger: LedgerFile) async -> BackendError? {
        let partialFile = partialFile
        do throws(BackendError) {
            try await BlockingIO.run { () throws(BackendError) in
                try BackendError.catching {
                    let file = try OpenFile(partialFile, mode: .writeExisting)
                    let length = segment.upperBound - segment.lowerBound + 1
                    try file.flushRange(offset: segment.lowerBound, length: length)
                    file.dropCached(offset: segment.lowerBound, length: length)
                }
                if let valid = queue.finished(segment) { try ledger.raise(to: valid) }
            }
            return nil
        } catch {
            return error
        }
    }
}

/// The observer each stream reports to: bytes and pauses go to the core's observer (its
/// throttles see all streams together), and it reads as cancelled when the core cancels
/// or once a sibling stream failed.
private final class StreamObserver: TransferObserver {
    private let parent: any TransferObserver
    private let stopped = Atomic<Bool>(false)

    init(_ parent: any TransferObserver) { self.parent = parent }

    func bytesTransferred(_ count: Int) -> Duration { parent.bytesTransferred(count) }

    var isCancelled: Bool { parent.isCancelled || stopped.load(ordering: .relaxed) }

    func stop() { stopped.store(true, ordering: .relaxed) }
}
