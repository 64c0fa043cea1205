import CurlTransport
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Testing

@testable import WebDAVBackend

/// Writes a source file of `size` bytes and an upload request for it that replaces a file
/// only this device writes (the case that may go in one `PUT`).
private func replacing(_ scratch: TemporaryDirectory, _ name: String, seed: UInt64, size: Int = 3000) throws -> UploadRequest {
    let source = scratch.child("source-" + name.replacingOccurrences(of: "/", with: "_"))
    try TreeGenerator.write(at: source, size: size, seed: seed, modified: 1_650_000_000.25 + Double(seed))
    let meta = try #require(try LocalFileSystem.metadata(source))
    return UploadRequest(source: source, destination: try RelativePath(name), size: meta.size, modifiedNanos: meta.modifiedNanos,
                         mayResume: false, expectsNewFile: false)
}

/// Whether `condition` holds within 10 s (a guard, not a timing): for log lines written by
/// another process once it has dealt with a request the client has already given up on.
private func eventually(_ condition: () -> Bool) async throws -> Bool {
    for _ in 0..<100 {
        if condition() { return true }
        try await Task.sleep(for: .milliseconds(100))
    }
    return condition()
}

/// `METHOD RAW-PATH` of each line of a proxy's or hostile server's log.
private func requestLines(_ lines: some Sequence<String>) -> [String] {
    lines.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
}

@Suite("WebDAV: one PUT to the final name where the server's own PUT is atomic", .integration)
struct WebDAVDirectPutTests {
    let scratch = TemporaryDirectory("ferry-webdav-direct-put")

    @Test("the probe cuts a PUT off half-way: nginx and Apache keep the old file whole (atomic PUT)",
          arguments: TestServer.Kind.webDAV)
    func probeFindsAtomicPut(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let backend = try WebDAVBackend(baseURL: proxy.url("/dav/atomic/"), settings: CurlTransportSettings())
        let features = try await backend.serverFeatures()
        #expect(features.atomicPut == .supported, "\(features)")
        #expect(features.description.contains("atomic PUT: yes"))
        #expect(try await eventually { proxy.requests.contains { $0.hasPrefix("PUT ") && $0.hasSuffix(" cut 8192/16384") } },
                "the server got half the body, then the cut: \(proxy.requests)")
        #expect(proxy.requests.filter { $0.hasSuffix(" cut 8192/16384") }.count == 1, "\(proxy.requests)")
        let left = try LocalFileSystem.directoryEntries(server.directory + "/root/atomic").filter { $0 != ".DAV" }
        #expect(left.isEmpty, "left behind: \(left)")
    }

    @Test("a file that replaces one only this device writes is one PUT to its name, and keeps its time",
          arguments: TestServer.Kind.webDAV)
    func replacedFileIsOnePut(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let backend = try WebDAVBackend(baseURL: proxy.url("/dav/direct/"), settings: CurlTransportSettings())
        _ = try await backend.discoverCapabilities()
        try await backend.makeDirectory(RelativePath("photos"))
        let start = proxy.requests.count
        var requests: [UploadRequest] = []
        for index in 0..<4 {
            let request = try replacing(scratch, "photos/IMG_\(index).jpg", seed: UInt64(index))
            let result = try await backend.upload(request, observer: NullTransferObserver())
            #expect(result.bytesSent == request.size && result.entry.size == request.size)
            if kind == .apache { #expect(result.entry.modifiedNanos == request.modifiedNanos, "Ferry's mtime property") }
            requests.append(request)
        }
        let sent = requestLines(proxy.requests.dropFirst(start))
        #expect(sent.filter { $0.hasPrefix("PUT ") } == (0..<4).map { "PUT /dav/direct/photos/IMG_\($0).jpg" }, "\(sent)")
        #expect(!sent.contains { $0.hasPrefix("MOVE ") || $0.contains(TemporaryName.suffix) }, "\(sent)")
        if kind == .apache {
            #expect(sent.filter { $0.hasPrefix("PROPPATCH ") }.count == 4, "one PROPPATCH per file for its time: \(sent)")
        }
        for request in requests {
            #expect(try TreeComparison.sameContent(request.source, server.directory + "/root/direct/" + request.destination.description))
            if kind == .apache {
                #expect(try await backend.stat(request.destination)?.modifiedNanos == request.modifiedNanos)
            }
        }
        #expect(try LocalFileSystem.directoryEntries(server.directory + "/root/direct/photos").allSatisfy { !TemporaryName.isTemporary($0) })
    }

    /// Why an upload keeps the temporary name on a server whose PUT is atomic.
    enum KeepsTemporary: String, CaseIterable, CustomTestStringConvertible {
        case newName, anotherDevicesFolder, guardedVersion, resumable, retry, turnedOff
        var testDescription: String { rawValue }
    }

    @Test("on nginx: a new name, a folder other devices write, a guarded version, a resumable file, a retry or direct_put: off keep PUT + MOVE",
          arguments: KeepsTemporary.allCases)
    func keepsTemporaryName(_ reason: KeepsTemporary) async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        var options = ["url": proxy.url("/dav/kept/")]
        if reason == .turnedOff { options["direct_put"] = "off" }
        let backend = try #require(try WebDAVBackend.plugin.make(BackendSettings(remoteName: "nas", options: options)) as? WebDAVBackend)
        #expect(try await backend.serverFeatures().atomicPut == .supported, "turned off uploads, not the probe")
        var request = try replacing(scratch, "IMG_1.jpg", seed: 1)
        switch reason {
        case .newName: request.expectsNewFile = true
        case .anotherDevicesFolder: request.temporaryTag = "laptop"
        case .guardedVersion: request.replacedETag = "\"5f-62d1a9a4\""
        case .resumable: request.mayResume = true
        case .retry:
            request.followsEarlierAttempt = true
            // What a refused MOVE whose DELETE was lost leaves.
            try Data("left by an earlier attempt".utf8).write(to: URL(fileURLWithPath: server.directory + "/root/kept/"
                + TemporaryName.for("IMG_1.jpg")))
        case .turnedOff: break
        }
        let start = proxy.requests.count
        _ = try await backend.upload(request, observer: NullTransferObserver())
        let temporary = TemporaryName.for("IMG_1.jpg", tag: request.temporaryTag)
        let sent = requestLines(proxy.requests.dropFirst(start)).filter { $0.hasPrefix("PUT ") || $0.hasPrefix("MOVE ") }
        #expect(sent == ["PUT /dav/kept/" + temporary, "MOVE /dav/kept/" + temporary], "\(sent)")
        #expect(try TreeComparison.sameContent(request.source, server.directory + "/root/kept/IMG_1.jpg"))
        #expect(try LocalFileSystem.directoryEntries(server.directory + "/root/kept").allSatisfy { !TemporaryName.isTemporary($0) })
    }

    @Test("on nginx: a source that changed while it was read is cut off before its last bytes, and the old file stays whole")
    func changedSourceNeverLands() async throws {
        let server = try await TestServer(.nginx)
        let backend = try WebDAVBackend(baseURL: server.url("/dav/changed/"), settings: CurlTransportSettings())
        let first = try replacing(scratch, "IMG_5.jpg", seed: 5, size: 300_000)
        _ = try await backend.upload(first, observer: NullTransferObserver())
        let stored = server.directory + "/root/changed/IMG_5.jpg"
        let before = try Data(contentsOf: URL(fileURLWithPath: stored))

        // Planned as the first version; the file now holds other bytes of the same size.
        try TreeGenerator.write(at: first.source, size: 300_000, seed: 6, modified: 1_650_000_100.5)
        await #expect {
            _ = try await backend.upload(first, observer: NullTransferObserver())
        } throws: { ($0 as? BackendError)?.code == .changedDuringTransfer }
        #expect(try Data(contentsOf: URL(fileURLWithPath: stored)) == before, "nothing of the changed read landed")
        #expect(try LocalFileSystem.directoryEntries(server.directory + "/root/changed").allSatisfy { !TemporaryName.isTemporary($0) })

        let again = try #require(try LocalFileSystem.metadata(first.source))
        var current = first
        current.size = again.size
        current.modifiedNanos = again.modifiedNanos
        _ = try await backend.upload(current, observer: NullTransferObserver())
        #expect(try TreeComparison.sameContent(current.source, stored))
    }

    @Test("a check of the last body bytes that fails cuts the body off before they go out")
    func lastBytesCheckCutsTheBody() async throws {
        let root = scratch.child("cut-root")
        let server = try await HostileServer("inplace", ["--root", root])
        let source = scratch.child("big.bin")
        try TreeGenerator.write(at: source, size: 1 << 20, seed: 9)
        var put = HTTPRequest(method: "PUT", url: server.url("/dav/big.bin"), body: .file(path: source, offset: 0, length: 1 << 20))
        put.lastBodyBytesCheck = { () throws(BackendError) in throw BackendError(.changedDuringTransfer, "changed") }
        await #expect {
            _ = try await CurlTransport(settings: CurlTransportSettings()).perform(put)
        } throws: { ($0 as? BackendError)?.code == .changedDuringTransfer }
        // This server writes what comes in place, so what it kept is what went out. It logs
        // the cut once it has read to the end of what came, which may be after the client
        // has given up.
        _ = try await eventually { server.requests.contains { $0.hasPrefix("PUT /dav/big.bin ") } }
        let line = try #require(server.requests.first { $0.hasPrefix("PUT /dav/big.bin ") })
        let received = try #require(Int(line.split(separator: " ")[3].split(separator: "/")[0]))
        #expect(line.contains(" cut ") && received < 1 << 20, "\(line)")
        #expect(try #require(try LocalFileSystem.metadata(root + "/big.bin")).size == Int64(received))
    }

    @Test("the probe learns whether a PUT honours If-None-Match: * (Apache) or writes anyway (nginx)",
          arguments: TestServer.Kind.webDAV)
    func probeFindsNewNameCondition(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        let backend = try WebDAVBackend(baseURL: server.url("/dav/condition/"), settings: CurlTransportSettings())
        let features = try await backend.serverFeatures()
        #expect(features.newNameCondition.isSupported == (kind == .apache), "\(features)")
    }

    @Test("on Apache: a small file for a free name is one PUT with If-None-Match: *; a name another writer took meanwhile is refused, its file kept")
    func newNameOnApache() async throws {
        let server = try await TestServer(.apache)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let backend = try WebDAVBackend(baseURL: proxy.url("/dav/fresh/"), settings: CurlTransportSettings())
        #expect(try await backend.serverFeatures().newNameCondition == .supported)
        try await backend.makeDirectory(RelativePath("photos"))
        var free = try replacing(scratch, "photos/IMG_1.jpg", seed: 1)
        free.expectsNewFile = true
        let start = proxy.requests.count
        let result = try await backend.upload(free, observer: NullTransferObserver())
        #expect(result.entry.size == free.size)
        let sent = requestLines(proxy.requests.dropFirst(start)).filter { $0.hasPrefix("PUT ") || $0.hasPrefix("MOVE ") }
        #expect(sent == ["PUT /dav/fresh/photos/IMG_1.jpg"], "\(sent)")
        #expect(try TreeComparison.sameContent(free.source, server.directory + "/root/fresh/photos/IMG_1.jpg"))

        // Another device created the name after this one listed the folder.
        let theirs = Data("another device's photo".utf8)
        try theirs.write(to: URL(fileURLWithPath: server.directory + "/root/fresh/photos/IMG_2.jpg"))
        var taken = try replacing(scratch, "photos/IMG_2.jpg", seed: 2)
        taken.expectsNewFile = true
        do {
            _ = try await backend.upload(taken, observer: NullTransferObserver())
            Issue.record("an upload onto a taken new name was not refused")
        } catch {
            #expect(error.code == .alreadyExists, "\(error)")
            #expect(error.cause?.contains("If-None-Match") == true, "\(error)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: server.directory + "/root/fresh/photos/IMG_2.jpg")) == theirs)
        #expect(try LocalFileSystem.directoryEntries(server.directory + "/root/fresh/photos").allSatisfy { !TemporaryName.isTemporary($0) })
    }

    @Test("a server whose PUT writes into the file as it arrives is found out, and keeps PUT + MOVE")
    func inPlaceServerKeepsTemporaryName() async throws {
        let root = scratch.child("in-place")
        let server = try await HostileServer("inplace", ["--root", root])
        let backend = try WebDAVBackend(baseURL: server.url("/dav/"), settings: CurlTransportSettings())
        let features = try await backend.serverFeatures()
        #expect(features.atomicPut == .unsupported("a PUT cut off after 8192 of 16384 bytes left 8192 other bytes under the name"),
                "\(features)")
        #expect(server.requests.contains { $0.hasPrefix("PUT /dav/\(WebDAVBackend.probeName(.atomicPut, tag: nil)) cut 8192/16384") }, "\(server.requests)")
        #expect(try LocalFileSystem.directoryEntries(root).isEmpty, "the probe file is removed")

        let request = try replacing(scratch, "IMG_2.jpg", seed: 2)
        let start = server.requests.count
        _ = try await backend.upload(request, observer: NullTransferObserver())
        let temporary = TemporaryName.for("IMG_2.jpg")
        let sent = requestLines(server.requests.dropFirst(start)).filter { $0.hasPrefix("PUT ") || $0.hasPrefix("MOVE ") }
        #expect(sent == ["PUT /dav/" + temporary, "MOVE /dav/" + temporary], "\(sent)")
        #expect(try TreeComparison.sameContent(request.source, root + "/IMG_2.jpg"))
    }
}

/// `putsDirectly`: the rule alone, no server.
@Suite("WebDAV: when an upload goes in one PUT to its name")
struct WebDAVDirectPutRuleTests {
    static let chunk: Int64 = 4 << 20

    func backend(_ directPut: WebDAVBackend.DirectPut = .auto) throws -> WebDAVBackend {
        try WebDAVBackend(baseURL: "http://127.0.0.1:9/dav/", settings: CurlTransportSettings(), uploadChunkSize: Self.chunk,
                          directPut: directPut)
    }

    func features(atomic: Bool, ranged: Bool) -> WebDAVServerFeatures {
        WebDAVServerFeatures(rangedPut: ranged ? .supported : .unsupported("HTTP 501 on a ranged PUT"),
                             modificationTimeProperty: .unsupported("HTTP 405 on PROPPATCH"), honoursOCMtime: false,
                             atomicPut: atomic ? .supported : .unsupported("a PUT cut off after 8192 of 16384 bytes left 8192 other bytes under the name"))
    }

    func request(size: Int64) throws -> UploadRequest {
        UploadRequest(source: "/nowhere", destination: try RelativePath("a/b.jpg"), size: size, modifiedNanos: 0, mayResume: false)
    }

    @Test("only where the PUT is atomic, direct_put is auto, and the file is not sent in chunks")
    func serverAndSize() throws {
        let small = try request(size: 1000)
        let large = try request(size: Self.chunk + 1)
        #expect(try backend().putsDirectly(small, features: features(atomic: true, ranged: true)))
        #expect(try !backend().putsDirectly(small, features: features(atomic: false, ranged: true)))
        #expect(try !backend(.off).putsDirectly(small, features: features(atomic: true, ranged: true)))
        // Chunks go into the temporary file, which is what an interruption leaves to continue.
        #expect(try !backend().putsDirectly(large, features: features(atomic: true, ranged: true)))
        // Without ranged PUT a large file is one PUT either way.
        #expect(try backend().putsDirectly(large, features: features(atomic: true, ranged: false)))
    }

    @Test("a new name only where the server honours If-None-Match: * on PUT, and only for a file of at most 64 KiB")
    func newNameWhereConditionHolds() throws {
        var honouring = features(atomic: true, ranged: false)
        honouring.newNameCondition = .supported
        var small = try request(size: WebDAVBackend.conditionalPutLimit)
        small.expectsNewFile = true
        var large = try request(size: WebDAVBackend.conditionalPutLimit + 1)
        large.expectsNewFile = true
        #expect(try backend().putsDirectly(small, features: honouring))
        #expect(try backend().directPut(of: small).headers.contains { $0 == ("If-None-Match", "*") })
        // The body of a larger file takes long enough to arrive that another writer could
        // create the name after the server checked the condition.
        #expect(try !backend().putsDirectly(large, features: honouring))
        #expect(try !backend().putsDirectly(small, features: features(atomic: true, ranged: false)))
        // A replacement carries no condition.
        #expect(try !backend().directPut(of: request(size: 10)).headers.contains { $0.0 == "If-None-Match" })
    }

    @Test("never for a new name (on a server that ignores If-None-Match), a folder other devices write, a guarded version, a file that may be continued, or a retry")
    func requestKinds() throws {
        let atomic = features(atomic: true, ranged: false)
        var newName = try request(size: 10)
        newName.expectsNewFile = true
        var tagged = try request(size: 10)
        tagged.temporaryTag = "laptop"
        var guarded = try request(size: 10)
        guarded.replacedETag = "\"1\""
        var resumable = try request(size: 10)
        resumable.mayResume = true
        var retry = try request(size: 10)
        retry.followsEarlierAttempt = true
        for request in [newName, tagged, guarded, resumable, retry] {
            #expect(try !backend().putsDirectly(request, features: atomic))
        }
    }
}
