import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import CurlTransport
@testable import HTTPBackend

/// `SegmentQueue` and `PartialFileLedger`: the pure parts of a download over several streams.
@Suite("Segments of a parallel download")
struct SegmentQueueTests {
    @Test("segments are handed out in order; the good prefix only grows over finished neighbours")
    func prefixGrowsInOrder() {
        var queue = SegmentQueue(from: 10, size: 45, segmentLength: 10)
        let segments = [queue.next(), queue.next(), queue.next(), queue.next(), queue.next()]
        #expect(segments == [10...19, 20...29, 30...39, 40...44, nil])
        #expect(!queue.finished(20...29) && queue.validBytes == 10)
        #expect(!queue.finished(40...44) && queue.validBytes == 10)
        #expect(queue.finished(10...19) && queue.validBytes == 30)
        #expect(queue.finished(30...39) && queue.validBytes == 45 && queue.isComplete)
    }

    @Test("segment lengths: four per stream, between 4 MiB and 64 MiB", arguments: [
        (Int64(1) << 30, 4, Int64(64) << 20), (Int64(100) << 20, 4, Int64(100) << 20 / 16), (Int64(8) << 20, 4, Int64(4) << 20),
    ])
    func segmentLength(remaining: Int64, streams: Int, expected: Int64) {
        #expect(SegmentQueue.segmentLength(remaining: remaining, streams: streams) == expected)
    }

    @Test("a ledger is a fixed-length record; anything else reads as no ledger")
    func ledgerRecord() {
        let record = PartialFileLedger.encode(validBytes: 123_456_789)
        #expect(record.count == PartialFileLedger.recordLength)
        #expect(PartialFileLedger.decode(record) == 123_456_789)
        #expect(PartialFileLedger.decode(Array(record.dropLast())) == nil)
        #expect(PartialFileLedger.decode(Array(record.prefix(10)) + Array(repeating: 0, count: record.count - 10)) == nil)
        #expect(PartialFileLedger.path(forPartial: "a/.b.jpg.ferry-part") == "a/.b.jpg.ferry-ledger.ferry-part")
        #expect(TemporaryName.isTemporary("." + "b.jpg.ferry-ledger.ferry-part"))
    }

    @Test("download_streams and multi_stream_cutoff are read, and refused out of range")
    func options() throws {
        let settings = try RemoteTransportOptions.transportSettings(
            BackendSettings(remoteName: "nas", options: ["download_streams": "2", "multi_stream_cutoff": "128M"]), environment: [:])
        #expect(settings.downloadStreams == 2 && settings.multiStreamCutoff == 128 << 20)
        #expect(CurlTransportSettings().downloadStreams == 4 && CurlTransportSettings().multiStreamCutoff == 64 << 20)
        for (key, value) in [("download_streams", "0"), ("download_streams", "17"), ("multi_stream_cutoff", "100k")] {
            #expect(throws: BackendError.self) {
                try RemoteTransportOptions.transportSettings(BackendSettings(remoteName: "nas", options: [key: value]), environment: [:])
            }
        }
    }

    @Test("Content-Range bounds", arguments: [
        ("bytes 0-9/20", Optional(Int64(0)...9)), ("bytes 10-19/*", 10...19), ("bytes */20", nil), ("items 0-1/2", nil), ("bytes 5-4/9", nil),
    ])
    func contentRangeBounds(value: String, expected: ClosedRange<Int64>?) {
        #expect(CurlTransferContext.contentRangeBounds(value) == expected)
    }
}

/// Downloads over several ranged streams from real nginx (and through a proxy that
/// ignores ranges): same bytes as the server's file, continued after an interruption,
/// never a mix of two versions.
@Suite("Parallel ranged download against real servers", .serialized, .integration)
struct ParallelDownloadTests {
    /// `size` random bytes (from the kernel: quicker than a seeded generator in a debug build).
    static func randomFile(_ path: String, size: Int, modified: Double) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let source = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let target = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        var remaining = size
        while remaining > 0 {
            let chunk = try source.read(upToCount: min(remaining, 1 << 20)) ?? Data()
            try target.write(contentsOf: chunk)
            remaining -= chunk.count
        }
        try target.close()
        try source.close()
        try TreeGenerator.setModificationTime(path, seconds: modified)
    }

    static func backend(_ url: String, cutoff: Int64 = 64 << 20) throws -> HTTPBackend {
        var settings = CurlTransportSettings()
        settings.multiStreamCutoff = cutoff
        return try HTTPBackend(baseURL: url, options: HTTPRemoteOptions(), settings: settings, limits: IndexLimits())
    }

    /// nginx serving `size` random bytes at /files/big/big.bin, the file as listed, and an
    /// empty partial file to fill.
    struct ServedFile {
        let server: TestServer
        let scratch: TemporaryDirectory
        let served: String
        let backend: HTTPBackend
        let path: RelativePath
        let entry: RemoteEntry
        let partial: String
    }

    static func servedFile(size: Int) async throws -> ServedFile {
        let server = try await TestServer(.nginx)
        let scratch = TemporaryDirectory("ferry-parallel")
        let served = server.directory + "/root/big/big.bin"
        try randomFile(served, size: size, modified: 1_700_000_000)
        let backend = try backend(server.url("/files/big"))
        let path = try RelativePath("big.bin")
        return ServedFile(server: server, scratch: scratch, served: served, backend: backend, path: path,
                          entry: try #require(try await backend.stat(path)), partial: try partial(scratch))
    }

    /// An empty partial file, as the core makes it.
    static func partial(_ scratch: TemporaryDirectory) throws -> String {
        let path = scratch.child(".big.bin.ferry-part")
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        return path
    }

    /// `GET` lines of the server's access log since `mark` with status 206, once the log
    /// has them all (nginx writes a line after the answer went out).
    static func rangedGets(_ server: TestServer, since mark: Int, atLeast count: Int) async throws -> Int {
        var ranged = 0
        for _ in 0..<3000 {
            ranged = server.accessLog.dropFirst(mark).filter { $0.hasPrefix("GET ") && $0.contains(" 206") }.count
            if ranged >= count { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        return ranged
    }

    @Test("a 96 MiB file comes over four ranged streams, byte for byte, leaving no ledger")
    func largeFile() async throws {
        let file = try await Self.servedFile(size: 96 << 20)
        let (served, backend, path, entry, partial) = (file.served, file.backend, file.path, file.entry, file.partial)
        let mark = try await file.server.logMark()
        let result = try await backend.download(DownloadRequest(source: path, partialFile: partial, offset: 0, expected: entry),
                                                observer: NullTransferObserver())
        #expect(result.bytesReceived == 96 << 20 && result.resumedFrom == 0 && result.entry.size == 96 << 20)
        #expect(try TreeComparison.sameContent(partial, served))
        #expect(!FileManager.default.fileExists(atPath: PartialFileLedger.path(forPartial: partial)))
        // 16 segments of 6 MiB, each its own 206.
        #expect(try await Self.rangedGets(file.server, since: mark, atLeast: 16) == 16)
    }

    @Test("cancelled midway, the partial file keeps only its good prefix; continuing completes it")
    func resumeAfterCancel() async throws {
        let file = try await Self.servedFile(size: 80 << 20)
        let (served, backend, path, entry, partial) = (file.served, file.backend, file.path, file.entry, file.partial)
        let stopper = StoppingObserver(after: 50 << 20)
        do {
            _ = try await backend.download(DownloadRequest(source: path, partialFile: partial, offset: 0, expected: entry),
                                           observer: stopper)
            Issue.record("the download was not cancelled")
        } catch {
            #expect(error.code == .cancelled, "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: PartialFileLedger.path(forPartial: partial)))
        let kept = try #require(try LocalFileSystem.metadata(partial)).size
        #expect(kept > 0 && kept <= 50 << 20, "kept \(kept)")
        #expect(try Self.samePrefix(partial, served, length: kept))

        let result = try await backend.download(DownloadRequest(source: path, partialFile: partial, offset: kept, expected: entry),
                                                observer: NullTransferObserver())
        #expect(result.resumedFrom == kept && result.bytesReceived == (80 << 20) - kept)
        #expect(try TreeComparison.sameContent(partial, served))
    }

    @Test("a file replaced between attempts is fetched whole, never continued into a mix")
    func replacedBetweenAttempts() async throws {
        let file = try await Self.servedFile(size: 80 << 20)
        let (served, backend, path, entry, partial) = (file.served, file.backend, file.path, file.entry, file.partial)
        do {
            _ = try await backend.download(DownloadRequest(source: path, partialFile: partial, offset: 0, expected: entry),
                                           observer: StoppingObserver(after: 50 << 20))
        } catch {
            #expect(error.code == .cancelled, "\(error)")
        }
        let kept = try #require(try LocalFileSystem.metadata(partial)).size
        #expect(kept > 0)
        // Another version of the same size, and a new date (so a new ETag).
        let replacement = file.scratch.child("replacement")
        try Self.randomFile(replacement, size: 80 << 20, modified: 1_700_000_100)
        try FileManager.default.removeItem(atPath: served)
        try FileManager.default.copyItem(atPath: replacement, toPath: served)
        try TreeGenerator.setModificationTime(served, seconds: 1_700_000_100)

        let result = try await backend.download(DownloadRequest(source: path, partialFile: partial, offset: kept, expected: entry),
                                                observer: NullTransferObserver())
        #expect(result.resumedFrom == 0)
        #expect(try TreeComparison.sameContent(partial, served))
    }

    /// The file is replaced while a segment's request is held at a proxy: that request,
    /// and every later one, reaches the server after the change, whatever the machine's
    /// load. (Swapping once 20 MiB had been counted missed the moment at a load of 48: every
    /// segment had been asked for before the count arrived, and the old file came whole.)
    @Test("a file replaced while the streams run is fetched again whole, in one stream")
    func replacedDuringDownload() async throws {
        let file = try await Self.servedFile(size: 80 << 20)
        let (served, path, entry, partial) = (file.served, file.path, file.entry, file.partial)
        let replacement = file.scratch.child("replacement")
        try Self.randomFile(replacement, size: 80 << 20, modified: 1_700_000_100)
        try FileManager.default.copyItem(atPath: replacement, toPath: served + ".new")
        try TreeGenerator.setModificationTime(served + ".new", seconds: 1_700_000_100)
        let gate = file.scratch.child("gate")
        try FileManager.default.createDirectory(atPath: gate, withIntermediateDirectories: true)
        // The request for the segment at 20 MiB is held; the file is swapped by rename
        // (instant) while it waits, then it goes on.
        let proxy = try await FaultProxy(upstream: file.server.origin, share: 0,
                                         options: ["--hold", "^GET /files/big/big\\.bin bytes=20971520-:0", "--gate", gate])
        let backend = try Self.backend(proxy.url("/files/big"))
        let swapper = Thread {
            while !FileManager.default.fileExists(atPath: gate + "/held") { usleep(5_000) }
            _ = rename(served + ".new", served)
            _ = FileManager.default.createFile(atPath: gate + "/release", contents: nil)
        }
        swapper.start()
        let result = try await backend.download(DownloadRequest(source: path, partialFile: partial, offset: 0, expected: entry),
                                                observer: NullTransferObserver())
        #expect(FileManager.default.fileExists(atPath: gate + "/release"), "the segment at 20 MiB was never asked for")
        #expect(result.resumedFrom == 0 && result.entry.size == 80 << 20)
        #expect(try TreeComparison.sameContent(partial, replacement), "\(proxy.requests.suffix(30).joined(separator: "\n"))")
        #expect(!FileManager.default.fileExists(atPath: PartialFileLedger.path(forPartial: partial)))
    }

    @Test("a server that says it takes ranges but answers 200 gets one stream, and the right bytes")
    func rangesIgnored() async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0, options: ["--ignore-ranges"])
        let scratch = TemporaryDirectory("ferry-parallel")
        let served = server.directory + "/root/big/big.bin"
        try Self.randomFile(served, size: 24 << 20, modified: 1_700_000_000)
        let backend = try Self.backend(proxy.url("/files/big"), cutoff: 8 << 20)
        let path = try RelativePath("big.bin")
        let entry = try #require(try await backend.stat(path))
        let partial = try Self.partial(scratch)
        let result = try await backend.download(DownloadRequest(source: path, partialFile: partial, offset: 0, expected: entry),
                                                observer: NullTransferObserver())
        #expect(result.resumedFrom == 0 && result.entry.size == 24 << 20)
        #expect(try TreeComparison.sameContent(partial, served))
        // HEAD, the ranged GETs refused at their first byte, then one whole GET answered.
        #expect(proxy.requests.filter { $0.hasPrefix("GET ") }.count >= 2)
    }

    static func samePrefix(_ left: String, _ right: String, length: Int64) throws -> Bool {
        let a = try FileHandle(forReadingFrom: URL(fileURLWithPath: left))
        let b = try FileHandle(forReadingFrom: URL(fileURLWithPath: right))
        defer {
            try? a.close()
            try? b.close()
        }
        return try a.read(upToCount: Int(length)) == b.read(upToCount: Int(length))
    }
}

/// Cancels the transfer once `limit` bytes have moved.
final class StoppingObserver: TransferObserver {
    private let limit: Int64
    private let moved = Atomic<Int64>(0)

    init(after limit: Int64) { self.limit = limit }

    func bytesTransferred(_ count: Int) -> Duration {
        moved.add(Int64(count), ordering: .relaxed)
        return .zero
    }

    var isCancelled: Bool { moved.load(ordering: .relaxed) >= limit }
}

