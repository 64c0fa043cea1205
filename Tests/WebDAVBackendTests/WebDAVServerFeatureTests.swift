import CurlTransport
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import WebDAVBackend
import FerrySystem

/// Cancels the transfer once a number of bytes went out, as a crash or a dropped
/// connection would cut it.
private final class CancelAfter: TransferObserver {
    let limit: Int
    let moved = Mutex(0)

    init(bytes: Int) {
        limit = bytes
    }

    func bytesTransferred(_ count: Int) -> Duration {
        moved.withLock { $0 += count }
        return .zero
    }

    var isCancelled: Bool { moved.withLock { $0 } >= limit }
}

/// One access-log line, in the fields both servers share (see scripts/test-servers/README.md).
private struct LoggedRequest {
    var method: String
    var uri: String
    var status: Int
    /// The request's bytes, headers included (Apache `%I`, nginx `$request_length`).
    var requestBytes: Int

    init?(_ line: String) {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count >= 5, let status = Int(fields[2]), let bytes = Int(fields[4]) else { return nil }
        method = String(fields[0])
        uri = String(fields[1])
        self.status = status
        requestBytes = bytes
    }
}

private extension TestServer {
    /// The requests logged after the first `start` lines. Servers write a line once a
    /// request is finished, which for nginx refusing a request before reading its body
    /// (a ranged PUT) can be well after the client has its answer, so the log is read once
    /// it has stopped growing for a while.
    func requests(since start: Int = 0) async throws -> [LoggedRequest] {
        var lines = accessLog
        var quietPolls = 0
        for _ in 0..<50 where quietPolls < 3 {
            try await Task.sleep(for: .milliseconds(100))
            let again = accessLog
            quietPolls = again.count == lines.count ? quietPolls + 1 : 0
            lines = again
        }
        return Array(lines.compactMap(LoggedRequest.init).dropFirst(start))
    }

    /// The requests logged once `expected` holds for them (30 s is only a guard). In busy
    /// test runs nginx wrote the line of the ranged PUT it refuses (501, `Connection:
    /// close`) after the quiet period of `requests(since:)`; likely its lingering close (up
    /// to 5 s), which logs a request when its connection ends. A test that counts the
    /// requests of a second operation first waits here for every line of the first.
    func requests(awaiting expected: ([LoggedRequest]) -> Bool) async throws -> [LoggedRequest] {
        for _ in 0..<300 {
            let logged = accessLog.compactMap(LoggedRequest.init)
            if expected(logged) { return try await requests() }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await requests()
    }

    /// Hands files made by the test in `root/` to the user the server writes as (see
    /// scripts/test-servers/README.md, "Running as root"), so it can change them.
    func giveToServer(_ relativePaths: [String]) throws {
        let owner = try String(contentsOfFile: directory + "/data-owner", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":").map(String.init)
        for path in relativePaths {
            try FileManager.default.setAttributes([.ownerAccountName: owner[0], .groupOwnerAccountName: owner[1]],
                                                  ofItemAtPath: directory + "/root/" + path)
        }
    }

    /// The size of a file in the served folder once it stops changing: a server may still
    /// be writing what it received when the client gave up.
    func settledSize(_ relative: String) async throws -> Int64? {
        var last: Int64? = -1
        for _ in 0..<50 {
            let size = try LocalFileSystem.metadata(directory + "/root/" + relative)?.size
            if size == last { return size }
            last = size
            try await Task.sleep(for: .milliseconds(100))
        }
        return last
    }
}

/// Writes a source file and the upload request for it.
private func sourceFile(_ scratch: TemporaryDirectory, size: Int, seed: UInt64, to destination: String,
                        modified: Double = 1_650_000_000.123_456) throws -> UploadRequest {
    let local = scratch.child("source-\(seed)")
    try TreeGenerator.write(at: local, size: size, seed: seed, modified: modified)
    let meta = try #require(try LocalFileSystem.metadata(local))
    return UploadRequest(source: local, destination: try RelativePath(destination), size: meta.size,
                         modifiedNanos: meta.modifiedNanos, mayResume: false)
}

private func bytes(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
}

@Suite("WebDAV server features: probe, resumed uploads, modification times", .serialized, .integration)
struct WebDAVServerFeatureTests {
    static let chunk = 4 << 20

    // MARK: Probe

    @Test("the probe finds ranged PUT and the mtime property on Apache, neither on nginx, once per backend",
          arguments: TestServer.Kind.webDAV)
    func probeOutcomes(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        // A probe file an earlier run could not remove (its DELETE failed).
        let leftover = server.directory + "/root/probe/" + WebDAVBackend.probeName
        try FileManager.default.createDirectory(atPath: server.directory + "/root/probe", withIntermediateDirectories: true)
        try Data("left behind".utf8).write(to: URL(fileURLWithPath: leftover))
        try server.giveToServer(["probe", "probe/" + WebDAVBackend.probeName])

        let backend = try WebDAVBackend(baseURL: server.url("/dav/probe/"), settings: CurlTransportSettings())
        #expect(!backend.capabilities.resumableUpload && !backend.capabilities.preservesModificationTime)

        // Concurrent callers share one probe.
        async let first = backend.discoverCapabilities()
        async let second = backend.discoverCapabilities()
        let (capabilities, again) = try await (first, second)
        #expect(capabilities == again)
        let features = try #require(backend.serverFeatureRecord.current)
        switch kind {
        case .apache:
            #expect(features.rangedPut == .supported)
            #expect(features.modificationTimeProperty == .supported)
            #expect(capabilities.resumableUpload && capabilities.preservesModificationTime)
        case .nginx:
            #expect(features.rangedPut == .unsupported("HTTP 501 on a ranged PUT"))
            #expect(features.modificationTimeProperty == .unsupported("HTTP 405 on PROPPATCH"))
            #expect(!capabilities.resumableUpload && !capabilities.preservesModificationTime)
        case .upload:
            Issue.record("the upload server is not a WebDAV server")
        }
        #expect(!features.honoursOCMtime)
        #expect(features.atomicPut == .supported)
        #expect(capabilities.serverSideCopy && capabilities.atomicUpload)

        // On the first file the first PUT and the ranged one; on the second the whole
        // version and the one cut off half-way (which both servers log as 400); on the third
        // the whole version and the one with If-None-Match: * (Apache refuses it with 412,
        // nginx writes); the DELETEs of the three files end the probe.
        let probeFiles = WebDAVBackend.ProbeFile.allCases.map { "/" + WebDAVBackend.probeName($0, tag: nil) }
        let probeRequests = try await server.requests(awaiting: { lines in
            probeFiles.allSatisfy { file in lines.contains { $0.method == "DELETE" && $0.uri.hasSuffix(file) } }
        }).filter { line in probeFiles.contains { line.uri.hasSuffix($0) } }
        #expect(probeRequests.filter { $0.method == "PUT" }.count == 6, "\(probeRequests.map(\.method))")
        #expect(probeRequests.filter { $0.method == "PUT" && $0.status == 400 }.count == 1, "\(probeRequests.map(\.status))")
        #expect(probeRequests.filter { $0.method == "PUT" && $0.status == 412 }.count == (kind == .apache ? 1 : 0),
                "\(probeRequests.map(\.status))")
        #expect(probeRequests.filter { $0.method == "DELETE" }.count == 3)
        // `.DAV` is where Apache keeps dead properties; WebDAV clients never see it.
        let leftovers = try LocalFileSystem.directoryEntries(server.directory + "/root/probe").filter { $0 != ".DAV" }
        #expect(leftovers.isEmpty, "left in the root: \(leftovers)")

        // Known now: asking again sends no probe. (Its PUTs were all logged above, so a probe
        // PUT after the mark can only be a new one; a late line of another probe request
        // cannot make this fail.)
        let before = try await server.requests().count
        _ = try await backend.discoverCapabilities()
        #expect(try await server.requests(since: before).filter { $0.uri.contains("/.ferry-probe") && $0.method == "PUT" }.isEmpty)
    }

    @Test("an upload of a device that shares the folder (a temporary tag) probes a file of its own")
    func taggedProbe() async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let scratch = TemporaryDirectory("ferry-dav-tagged-probe")
        let backend = try WebDAVBackend(baseURL: proxy.url("/dav/shared/"), settings: CurlTransportSettings())
        var request = try sourceFile(scratch, size: 1000, seed: 13, to: "IMG_1.jpg")
        request.temporaryTag = "laptop"
        _ = try await backend.upload(request, observer: NullTransferObserver())
        let probePaths = Set(proxy.requests.filter { $0.contains(".ferry-probe") }.map { String($0.split(separator: " ")[1]) })
        #expect(probePaths == ["/dav/shared/.ferry-probe.laptop.ferry-part", "/dav/shared/.ferry-probe-atomic.laptop.ferry-part",
                               "/dav/shared/.ferry-probe-condition.laptop.ferry-part"], "\(probePaths)")
        #expect(try LocalFileSystem.directoryEntries(server.directory + "/root/shared") == ["IMG_1.jpg"])
    }

    @Test("a probe that fails on the way (5xx, dropped connections) is thrown, not remembered as 'unsupported'")
    func failedProbeIsNotRemembered() async throws {
        let server = try await TestServer(.apache)
        let proxy = try await FaultProxy(upstream: server.origin, share: 1.0)
        let backend = try WebDAVBackend(baseURL: proxy.origin + "/dav/flaky/", settings: CurlTransportSettings())
        await #expect {
            _ = try await backend.discoverCapabilities()
        } throws: { ($0 as? BackendError)?.isRetryable == true }
        #expect(backend.serverFeatureRecord.current == nil)
        #expect(!backend.capabilities.resumableUpload)
    }

    @Test("Apache: a remote whose root refuses new files still takes uploads into a writable folder, where the probe runs")
    func probeInUploadFolder() async throws {
        let server = try await TestServer(.apache)
        let scratch = TemporaryDirectory("ferry-dav-readonly-root")
        let root = server.directory + "/root/ro"
        try FileManager.default.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
        try server.giveToServer(["ro", "ro/sub"])
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: root)

        let backend = try WebDAVBackend(baseURL: server.url("/dav/ro/"), settings: CurlTransportSettings())
        let request = try sourceFile(scratch, size: 1000, seed: 12, to: "sub/IMG_1.jpg")
        let result = try await backend.upload(request, observer: NullTransferObserver())
        #expect(result.entry.modifiedNanos == request.modifiedNanos)
        #expect(backend.serverFeatureRecord.current?.rangedPut == .supported)
        #expect(try bytes(root + "/sub/IMG_1.jpg") == bytes(request.source))
    }

    // MARK: Resumed uploads

    @Test("Apache: an upload cut in the third chunk continues from what the server kept, sending only the rest")
    func apacheResumesInterruptedUpload() async throws {
        let server = try await TestServer(.apache)
        let scratch = TemporaryDirectory("ferry-dav-resume")
        let backend = try WebDAVBackend(baseURL: server.url("/dav/resume/"), settings: CurlTransportSettings(),
                                        uploadChunkSize: Int64(Self.chunk))
        var request = try sourceFile(scratch, size: 5 * Self.chunk + 12_345, seed: 7, to: "clips/VID_0001.mp4")
        let temporary = "resume/clips/" + TemporaryName.for("VID_0001.mp4")

        await #expect {
            _ = try await backend.upload(request, observer: CancelAfter(bytes: 2 * Self.chunk + 1_500_000))
        } throws: { ($0 as? BackendError)?.code == .cancelled }
        let kept = try #require(try await server.settledSize(temporary))
        // Two whole chunks, plus what the server wrote of the third before the cut.
        #expect(kept >= Int64(2 * Self.chunk) && kept < request.size, "kept \(kept)")
        #expect(try LocalFileSystem.metadata(server.directory + "/root/resume/clips/VID_0001.mp4") == nil)

        // The cut PUT (the third chunk's) is logged when the server has finished with it,
        // which can be seconds after the client gave up: the count starts after its line.
        let logStart = try await server.requests(awaiting: { logged in
            logged.filter { $0.method == "PUT" && $0.uri.hasSuffix(".ferry-part") }.count >= 3
        }).count
        request.mayResume = true
        let result = try await backend.upload(request, observer: NullTransferObserver())
        #expect(result.resumedFrom == kept)
        #expect(result.bytesSent == request.size - kept)
        #expect(result.entry.size == request.size)

        // What went over the wire: only the missing part (plus headers), in ranged PUTs.
        let puts = try await server.requests(since: logStart).filter { $0.method == "PUT" }
        let received = puts.reduce(0) { $0 + $1.requestBytes }
        #expect(puts.allSatisfy { $0.uri.hasSuffix(".ferry-part") })
        #expect(received >= Int(result.bytesSent) && received < Int(result.bytesSent) + 1024 * puts.count,
                "\(received) bytes received by the server for \(result.bytesSent) sent")
        #expect(try bytes(server.directory + "/root/resume/clips/VID_0001.mp4") == bytes(request.source))
        #expect(try LocalFileSystem.metadata(server.directory + "/root/" + temporary) == nil)
    }

    @Test("Apache: a partial file whose last bytes differ from the local file is not continued")
    func apacheRestartsOnTamperedPartial() async throws {
        let server = try await TestServer(.apache)
        let scratch = TemporaryDirectory("ferry-dav-tamper")
        let backend = try WebDAVBackend(baseURL: server.url("/dav/tamper/"), settings: CurlTransportSettings(),
                                        uploadChunkSize: Int64(Self.chunk))
        var request = try sourceFile(scratch, size: 4 * Self.chunk, seed: 8, to: "VID_0002.mp4")
        let temporary = server.directory + "/root/tamper/" + TemporaryName.for("VID_0002.mp4")
        await #expect(throws: BackendError.self) {
            _ = try await backend.upload(request, observer: CancelAfter(bytes: 2 * Self.chunk + 100_000))
        }
        let kept = try #require(try await server.settledSize("tamper/" + TemporaryName.for("VID_0002.mp4")))
        #expect(kept >= Int64(2 * Self.chunk))

        // Another writer (or a torn write) changed bytes near the end of what the server holds.
        let file = try #require(FileHandle(forUpdatingAtPath: temporary))
        try file.seek(toOffset: UInt64(kept - 1000))
        try file.write(contentsOf: Data(repeating: 0x5A, count: 10))
        try file.close()

        request.mayResume = true
        let result = try await backend.upload(request, observer: NullTransferObserver())
        #expect(result.resumedFrom == 0)
        #expect(result.bytesSent == request.size)
        #expect(try bytes(server.directory + "/root/tamper/VID_0002.mp4") == bytes(request.source))
    }

    @Test("nginx: without ranged PUT an interrupted upload starts over, even over a partial file that would fit")
    func nginxRestarts() async throws {
        let server = try await TestServer(.nginx)
        let scratch = TemporaryDirectory("ferry-dav-nginx-resume")
        let backend = try WebDAVBackend(baseURL: server.url("/dav/restart/"), settings: CurlTransportSettings(),
                                        uploadChunkSize: Int64(Self.chunk))
        var request = try sourceFile(scratch, size: 3 * Self.chunk, seed: 9, to: "VID_0003.mp4")
        let temporaryName = TemporaryName.for("VID_0003.mp4")
        await #expect(throws: BackendError.self) {
            _ = try await backend.upload(request, observer: CancelAfter(bytes: Self.chunk))
        }
        // nginx keeps nothing of an interrupted PUT.
        #expect(try await server.settledSize("restart/" + temporaryName) == nil)

        // Even a correct prefix left by some other means is not continued. The count starts
        // once the interrupted PUT is logged (nginx logs it when its connection ends).
        try bytes(request.source).prefix(Self.chunk).write(to: URL(fileURLWithPath: server.directory + "/root/restart/" + temporaryName))
        let logStart = try await server.requests(awaiting: { logged in
            logged.contains { $0.method == "PUT" && $0.uri.hasSuffix(temporaryName) }
        }).count
        request.mayResume = true
        let result = try await backend.upload(request, observer: NullTransferObserver())
        #expect(result.resumedFrom == 0)
        #expect(result.bytesSent == request.size)
        let puts = try await server.requests(since: logStart).filter { $0.method == "PUT" }
        #expect(puts.count == 1 && puts[0].requestBytes >= Int(request.size), "\(puts.map(\.requestBytes))")
        #expect(try bytes(server.directory + "/root/restart/VID_0003.mp4") == bytes(request.source))
    }

    @Test("Apache: a large file goes in chunks, each a ranged PUT after the first, and arrives whole")
    func apacheChunks() async throws {
        let server = try await TestServer(.apache)
        let scratch = TemporaryDirectory("ferry-dav-chunks")
        let backend = try WebDAVBackend(baseURL: server.url("/dav/chunks/"), settings: CurlTransportSettings(),
                                        uploadChunkSize: Int64(Self.chunk))
        let request = try sourceFile(scratch, size: 3 * Self.chunk + 1, seed: 10, to: "big.bin")
        _ = try await backend.discoverCapabilities()
        let logStart = try await server.requests().count
        let result = try await backend.upload(request, observer: NullTransferObserver())
        #expect(result.resumedFrom == 0 && result.bytesSent == request.size)
        // Only the file's own PUTs: a line of the capability probe's requests may be logged
        // after the mark. Waits for the four lines, which a busy server may log late.
        let puts = try await server.requests(awaiting: { logged in
            logged.dropFirst(logStart).filter { $0.method == "PUT" && $0.uri.contains("big.bin") }.count >= 4
        }).dropFirst(logStart).filter { $0.method == "PUT" && $0.uri.contains("big.bin") }
        #expect(puts.count == 4, "\(puts.count) PUTs for 3 chunks and 1 byte")
        #expect(try bytes(server.directory + "/root/chunks/big.bin") == bytes(request.source))
    }

    // MARK: Modification times

    @Test("Apache: the mtime survives upload, stat, list and download to the nanosecond; another writer's PUT drops it")
    func apacheKeepsModificationTime() async throws {
        let server = try await TestServer(.apache)
        let scratch = TemporaryDirectory("ferry-dav-mtime")
        let backend = try WebDAVBackend(baseURL: server.url("/dav/mtime/"), settings: CurlTransportSettings())
        let request = try sourceFile(scratch, size: 5000, seed: 11, to: "photos/IMG_1.jpg")
        #expect(request.modifiedNanos % 1_000_000_000 != 0, "the test needs a sub-second mtime")

        let result = try await backend.upload(request, observer: NullTransferObserver())
        #expect(result.entry.modifiedNanos == request.modifiedNanos)
        #expect(try await backend.stat(request.destination)?.modifiedNanos == request.modifiedNanos)
        #expect(try await backend.list(RelativePath("photos")).first?.modifiedNanos == request.modifiedNanos)
        let listed = try #require(try await backend.stat(request.destination))
        let partial = scratch.child("partial")
        try Data().write(to: URL(fileURLWithPath: partial))  // the core creates it; backends open it
        let download = try await backend.download(
            DownloadRequest(source: request.destination, partialFile: partial, offset: 0, expected: listed),
            observer: NullTransferObserver())
        #expect(download.entry.modifiedNanos == request.modifiedNanos)

        // A client that knows nothing of Ferry's property replaces the file: the property
        // stays on the server (Apache keeps dead properties across PUT) but no longer applies.
        try await Task.sleep(for: .milliseconds(1100))
        let other = CurlTransport(settings: CurlTransportSettings())
        let put = try await other.perform(HTTPRequest(method: "PUT", url: server.url("/dav/mtime/photos/IMG_1.jpg"),
                                                      body: .data(Data("new content".utf8))))
        #expect(put.isSuccess)
        let replaced = try #require(try await backend.stat(request.destination))
        #expect(replaced.size == 11)
        let now = Int64(Date().timeIntervalSince1970 * 1e9)
        #expect(abs((replaced.modifiedNanos ?? 0) - now) < 60_000_000_000, "stale mtime \(String(describing: replaced.modifiedNanos))")
    }

    @Test("nginx: one PROPPATCH (the probe's, refused), none for the uploads after it")
    func nginxStopsAfterRefusal() async throws {
        let server = try await TestServer(.nginx)
        let scratch = TemporaryDirectory("ferry-dav-nginx-mtime")
        let backend = try WebDAVBackend(baseURL: server.url("/dav/mtime/"), settings: CurlTransportSettings())
        for index in 0..<3 {
            let request = try sourceFile(scratch, size: 100 + index, seed: 20 + UInt64(index), to: "IMG_\(index).jpg")
            let result = try await backend.upload(request, observer: NullTransferObserver())
            #expect(result.entry.modifiedNanos != request.modifiedNanos)
        }
        // nginx refuses PROPPATCH without reading the body, and may log it late (see `requests(awaiting:)`).
        let propPatches = try await server.requests(awaiting: { $0.contains { $0.method == "PROPPATCH" } })
            .filter { $0.method == "PROPPATCH" }
        #expect(propPatches.count == 1 && propPatches.allSatisfy { $0.status == 405 }, "\(propPatches.map(\.status))")
    }

    @Test("Apache: one PROPPATCH per upload, after the probe's")
    func apachePropPatchPerUpload() async throws {
        let server = try await TestServer(.apache)
        let scratch = TemporaryDirectory("ferry-dav-apache-mtime")
        let backend = try WebDAVBackend(baseURL: server.url("/dav/mtime/"), settings: CurlTransportSettings())
        for index in 0..<3 {
            let request = try sourceFile(scratch, size: 100 + index, seed: 30 + UInt64(index), to: "IMG_\(index).jpg",
                                         modified: 1_600_000_000.5 + Double(index))
            let result = try await backend.upload(request, observer: NullTransferObserver())
            #expect(result.entry.modifiedNanos == request.modifiedNanos)
        }
        let propPatches = try await server.requests(awaiting: { $0.filter { $0.method == "PROPPATCH" }.count >= 4 })
            .filter { $0.method == "PROPPATCH" }
        #expect(propPatches.count == 4 && propPatches.allSatisfy { $0.status == 207 }, "\(propPatches.map(\.status))")
    }

    @Test("Apache with keep_mtime: false: no PROPPATCH but the probe's, and uploads report the server's time")
    func apacheWithoutModificationTimeProperty() async throws {
        let server = try await TestServer(.apache)
        let scratch = TemporaryDirectory("ferry-dav-apache-no-mtime")
        let settings = BackendSettings(remoteName: "nas", options: ["url": server.url("/dav/fast/"), "keep_mtime": "false"])
        let backend = try #require(try WebDAVBackend.plugin.make(settings) as? WebDAVBackend)
        let request = try sourceFile(scratch, size: 100, seed: 40, to: "IMG_0.jpg")
        let result = try await backend.upload(request, observer: NullTransferObserver())
        #expect(result.entry.modifiedNanos != request.modifiedNanos)
        #expect(!backend.capabilities.preservesModificationTime)
        #expect(backend.capabilities.resumableUpload)
        #expect(try await server.requests(awaiting: { $0.contains { $0.method == "PROPPATCH" } })
            .filter { $0.method == "PROPPATCH" }.count == 1)
    }
}
