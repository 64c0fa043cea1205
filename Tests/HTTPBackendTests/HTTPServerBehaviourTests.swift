import CurlTransport
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

@testable import HTTPBackend
import FerrySystem

/// What the HTTP backend does with each kind of server, beyond the shared checks: the
/// rename probe, HTML indexes and their HEAD requests, read-only remotes, hostile names.
@Suite("HTTP backend against real servers", .serialized, .integration)
struct HTTPServerBehaviourTests {
    static func backend(_ url: String, _ options: HTTPRemoteOptions = HTTPRemoteOptions(),
                        limits: IndexLimits = IndexLimits()) throws -> HTTPBackend {
        try HTTPBackend(baseURL: url, options: options, settings: CurlTransportSettings(), limits: limits)
    }

    /// Writes a local file and returns an upload request for it.
    static func source(_ scratch: TemporaryDirectory, _ destination: String, size: Int, seed: UInt64) throws -> UploadRequest {
        let local = scratch.child("src-\(seed)")
        try TreeGenerator.write(at: local, size: size, seed: seed, modified: 1_700_000_000)
        let meta = try #require(try LocalFileSystem.metadata(local))
        return UploadRequest(source: local, destination: try RelativePath(destination), size: Int64(size),
                             modifiedNanos: meta.modifiedNanos, mayResume: false)
    }

    /// The access log lines written since `mark` (a line count).
    static func log(_ server: TestServer, since mark: Int) -> [String] {
        Array(server.accessLog.dropFirst(mark))
    }

    /// A mark for `log(_:since:)` once the server has logged every request it answered so
    /// far (a marker request, see `TestServer.logMark`). The upload server logs a request
    /// before it sends the answer, so its log is complete whenever the client has one.
    static func settledMark(_ server: TestServer) async throws -> Int {
        server.kind == .upload ? server.accessLog.count : try await server.logMark()
    }

    /// `METHOD URI STATUS` of the requests logged since `mark`, once there are `count` of
    /// them: a server writes its log line after the answer has gone out, so the client can
    /// be quicker than the log (30 s is only a guard against a hang).
    static func log(_ server: TestServer, since mark: Int, count: Int) async throws -> [String] {
        var waited = 0
        while log(server, since: mark).count < count && waited < 3000 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        return log(server, since: mark).map { $0.split(separator: " ").prefix(3).joined(separator: " ") }
    }

    @Test("rename: auto finds MOVE on nginx /files/, and uploads through a temporary name")
    func probeFindsMove() async throws {
        let server = try await TestServer(.nginx)
        let scratch = TemporaryDirectory("ferry-http")
        let backend = try Self.backend(server.url("/files/auto"))
        #expect(backend.capabilities.atomicUpload == false, "claimed before the probe")
        let first = try await backend.upload(try Self.source(scratch, "a/one.jpg", size: 5000, seed: 1),
                                             observer: NullTransferObserver())
        #expect(backend.capabilities.atomicUpload && backend.capabilities.serverSideMove)
        // nginx took the modification time from the PUT's Date, and MOVE kept it.
        let sourceTime: Int64 = 1_700_000_000_000_000_000
        #expect(first.entry.modifiedNanos == sourceTime)
        #expect(try await backend.list(RelativePath("a")).first?.modifiedNanos == sourceTime)
        let mark = try await Self.settledMark(server)
        _ = try await backend.upload(try Self.source(scratch, "a/two.jpg", size: 7000, seed: 2), observer: NullTransferObserver())
        let requests = try await Self.log(server, since: mark, count: 3)
        #expect(requests == ["PUT /files/auto/a/.two.jpg.ferry-part 201", "MOVE /files/auto/a/.two.jpg.ferry-part 204",
                             "HEAD /files/auto/a/two.jpg 200"], "\(requests)")
        // The probe cleaned up after itself: only the two uploads are on disk.
        #expect(try TreeComparison.files(in: server.directory + "/root/auto").keys.sorted() == ["a/one.jpg", "a/two.jpg"])
    }

    @Test("without MOVE (nginx /plain/), a file goes to its final name and is checked with HEAD")
    func probeFindsNoMove() async throws {
        let server = try await TestServer(.nginx)
        let scratch = TemporaryDirectory("ferry-http")
        let backend = try Self.backend(server.url("/plain/direct"))
        let request = try Self.source(scratch, "x/file.bin", size: 100_000, seed: 3)
        let result = try await backend.upload(request, observer: NullTransferObserver())
        #expect(result.entry.size == 100_000 && result.entry.kind == .file)
        #expect(backend.capabilities.atomicUpload == false && backend.capabilities.serverSideMove == false)
        let mark = try await Self.settledMark(server)
        _ = try await backend.upload(request, observer: NullTransferObserver())
        let requests = try await Self.log(server, since: mark, count: 2)
        #expect(requests == ["PUT /plain/direct/x/file.bin 204", "HEAD /plain/direct/x/file.bin 200"], "\(requests)")
        #expect(try TreeComparison.files(in: server.directory + "/root/direct").keys.sorted() == ["x/file.bin"])
        await #expect(throws: BackendError.self) {
            try await backend.move(from: RelativePath("x/file.bin"), to: RelativePath("x/moved.bin"), overwrite: false)
        }
        // A server without MKCOL cannot have an empty folder, and says so.
        do {
            try await backend.makeDirectory(RelativePath("empty/folder"))
            Issue.record("makeDirectory succeeded without MKCOL")
        } catch {
            #expect(error.code == .unsupported && error.message.contains("cannot create folders"), "\(error)")
        }
    }

    @Test("an HTML index (nginx /html/, detected) lists what the JSON index lists, sizes and dates by HEAD")
    func htmlMatchesJSON() async throws {
        let server = try await TestServer(.nginx)
        let scratch = TemporaryDirectory("ferry-http")
        let writer = try Self.backend(server.url("/files/same"))
        let sizes = ["a b.jpg": 300, "été.gpx": 1000, "100%.mov": 70_000, "sub/inner.jpg": 5, "empty.txt": 0]
        for (index, (name, size)) in sizes.sorted(by: { $0.key < $1.key }).enumerated() {
            _ = try await writer.upload(try Self.source(scratch, name, size: size, seed: UInt64(10 + index)),
                                        observer: NullTransferObserver())
        }
        // An HTML index gives folders no date, and HEAD adds ETags; the rest must agree.
        func comparable(_ entries: [RemoteEntry]) -> [String] {
            entries.map { "\($0.path) \($0.kind) \($0.size) \($0.kind == .file ? $0.modifiedNanos.map(String.init) ?? "-" : "")" }
        }
        let json = try await writer.list(.root)
        let mark = try await Self.settledMark(server)
        let html = try await Self.backend(server.url("/html/same"), HTTPRemoteOptions(upload: .none)).list(.root)
        #expect(comparable(html) == comparable(json))
        #expect(json.map(\.path.string) == ["100%.mov", "a b.jpg", "empty.txt", "sub", "été.gpx"])
        #expect(json.first { $0.path.string == "100%.mov" }?.size == 70_000)
        #expect(json.allSatisfy { $0.kind == .directory || $0.modifiedNanos != nil })
        let heads = try await Self.log(server, since: mark, count: 5).filter { $0.hasPrefix("HEAD ") }
        #expect(heads.count == 4, "\(heads)")
    }

    @Test("the HEAD requests of an HTML listing are bounded")
    func headBound() async throws {
        let server = try await TestServer(.nginx)
        let scratch = TemporaryDirectory("ferry-http")
        let writer = try Self.backend(server.url("/files/many"))
        for index in 0..<3 {
            _ = try await writer.upload(try Self.source(scratch, "f\(index).jpg", size: 10, seed: UInt64(index)),
                                        observer: NullTransferObserver())
        }
        let reader = try Self.backend(server.url("/html/many"), HTTPRemoteOptions(listing: .html, upload: .none),
                                      limits: IndexLimits(maxHeadRequests: 2))
        let mark = try await Self.settledMark(server)
        do {
            _ = try await reader.list(.root)
            Issue.record("a listing needing 3 HEAD requests passed a bound of 2")
        } catch {
            #expect(error.code == .protocolViolation && error.message.contains("more than 2 HEAD requests"), "\(error)")
        }
        #expect(try await Self.log(server, since: mark, count: 1).filter { $0.hasPrefix("HEAD ") }.isEmpty)
    }

    @Test("upload: none is read-only: every change is refused before any request, reading works")
    func readOnly() async throws {
        let server = try await TestServer(.nginx)
        let scratch = TemporaryDirectory("ferry-http")
        let writer = try Self.backend(server.url("/files/ro"))
        let request = try Self.source(scratch, "keep.jpg", size: 1234, seed: 5)
        _ = try await writer.upload(request, observer: NullTransferObserver())

        let reader = try Self.backend(server.url("/files/ro"), HTTPRemoteOptions(upload: .none))
        #expect(!reader.capabilities.atomicUpload && !reader.capabilities.serverSideMove)
        let mark = try await Self.settledMark(server)
        let path = try RelativePath("keep.jpg")
        let other = try RelativePath("other.jpg")
        for change in ["upload", "delete", "move", "makeDirectory"] {
            do throws(BackendError) {
                switch change {
                case "upload": _ = try await reader.upload(request, observer: NullTransferObserver())
                case "delete": try await reader.delete(path)
                case "move": try await reader.move(from: path, to: other, overwrite: true)
                default: try await reader.makeDirectory(other)
                }
                Issue.record("\(change) succeeded on a read-only remote")
            } catch {
                #expect(error.code == .readOnly && error.message.contains("read-only (upload: none)"), "\(change): \(error)")
                #expect(!error.isRetryable)
            }
        }
        // Nothing reached the server: the only line since the mark is the next mark's own.
        #expect(try await Self.settledMark(server) == mark + 1, "\(Self.log(server, since: mark))")
        #expect(try await reader.list(.root).map(\.path.string) == ["keep.jpg"])
        let partial = scratch.child("partial")
        try Data().write(to: URL(fileURLWithPath: partial))  // the core creates it; backends open it
        let entry = try #require(try await reader.stat(path))
        _ = try await reader.download(DownloadRequest(source: path, partialFile: partial, offset: 0, expected: entry),
                                      observer: NullTransferObserver())
        #expect(try TreeComparison.sameContent(partial, request.source))
    }

    @Test("the reachability probe is one HEAD, and any answer counts")
    func reachability() async throws {
        let server = try await TestServer(.upload)
        let backend = try Self.backend(server.url("/no/such/folder"), HTTPRemoteOptions(listing: .none))
        let mark = try await Self.settledMark(server)
        try await backend.checkReachable()
        #expect(try await Self.log(server, since: mark, count: 1) == ["HEAD /no/such/folder/ 404"])
        try server.stop()
        do {
            try await backend.checkReachable()
            Issue.record("a stopped server was reachable")
        } catch {
            #expect(error.suggestsOutage, "\(error)")
        }
    }

    @Test("listing: none and delete: false say what they refuse")
    func switchedOff() async throws {
        let server = try await TestServer(.nginx)
        let scratch = TemporaryDirectory("ferry-http")
        let backend = try Self.backend(server.url("/files/off"), HTTPRemoteOptions(listing: .none, allowsDelete: false))
        _ = try await backend.upload(try Self.source(scratch, "x.jpg", size: 10, seed: 6), observer: NullTransferObserver())
        do {
            _ = try await backend.list(.root)
            Issue.record("listed with listing: none")
        } catch {
            #expect(error.code == .unsupported && error.message.contains("listing: none"), "\(error)")
        }
        do {
            try await backend.delete(RelativePath("x.jpg"))
            Issue.record("deleted with delete: false")
        } catch {
            #expect(error.code == .unsupported && error.message.contains("delete: false"), "\(error)")
        }
        #expect(try await backend.stat(RelativePath("x.jpg"))?.size == 10)
    }

    @Test("a real server's index with a hostile name is refused for that folder only", arguments: [
        (TestServer.Kind.nginx, "/files"), (.upload, ""),
    ])
    func hostileNameOnDisk(kind: TestServer.Kind, prefix: String) async throws {
        let server = try await TestServer(kind)
        let folder = server.directory + "/root/hostile"
        try FileManager.default.createDirectory(atPath: folder + "/bad", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder + "/bad/line\nbreak.jpg"))
        try Data("y".utf8).write(to: URL(fileURLWithPath: folder + "/fine.jpg"))
        let backend = try Self.backend(server.url(prefix + "/hostile"), HTTPRemoteOptions(upload: .none))
        #expect(try await backend.list(.root).map(\.path.string) == ["bad", "fine.jpg"])
        do {
            let entries = try await backend.list(RelativePath("bad"))
            Issue.record("accepted \(entries)")
        } catch {
            #expect(error.code == .protocolViolation && error.path == "bad", "\(error)")
            #expect(error.message.contains("not a valid file name"), "\(error)")
        }
    }
}
