import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Testing

@testable import S3Backend

/// `deleteFiles` against real stores, counted by a proxy in front of them: DeleteObjects
/// a thousand keys at a time, a key the store refuses failing alone, and the fallback to
/// one DELETE per key for a store that does not implement DeleteObjects.
@Suite("S3 DeleteObjects", .serialized, .integration)
struct S3DeleteObjectsTests {
    /// A small object per name under `prefix`, written straight to the store.
    static func fill(_ server: S3TestServer, prefix: String, names: [String]) async throws {
        let backend = try server.backend(prefix: prefix)
        let scratch = TemporaryDirectory("ferry-s3-delete")
        let source = scratch.child("source")
        try TreeGenerator.write(at: source, size: 16, seed: 1)
        let meta = try #require(try LocalFileSystem.metadata(source))
        for name in names {
            _ = try await backend.upload(UploadRequest(source: source, destination: try RelativePath(name), size: meta.size,
                                                       modifiedNanos: meta.modifiedNanos, mayResume: false),
                                         observer: NullTransferObserver())
        }
    }

    /// A backend that reaches `server` through `proxy` (which keeps the Host header, so
    /// SeaweedFS's signature check passes).
    static func backend(through proxy: FaultProxy, prefix: String) throws -> S3Backend {
        let addressing = try S3Addressing(endpoint: proxy.origin, bucket: S3TestServer.bucket, prefix: prefix, virtualHost: false)
        let credentials = S3Credentials(accessKeyID: S3TestServer.accessKey, secretAccessKey: S3TestServer.secretKey, source: "the test")
        return S3Backend(configuration: S3RemoteConfiguration(addressing: addressing, region: "us-east-1", credentials: credentials))
    }

    static func deleteObjectsRequests(_ proxy: FaultProxy) -> [String] {
        proxy.requests.filter { $0.hasPrefix("POST ") && $0.contains("?delete") }
    }

    static func singleDeletes(_ proxy: FaultProxy) -> [String] {
        proxy.requests.filter { $0.hasPrefix("DELETE ") }
    }

    @Test("1,001 keys and one already gone: two DeleteObjects requests, no DELETE, nothing left",
          arguments: S3TestServer.Kind.singleProcess)
    func thousandsInTwoRequests(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        let names = (0..<1001).map { String(format: "DCIM/IMG_%04d & co.jpg", $0) }
        try await Self.fill(server, prefix: "batch", names: names)
        let proxy = try await FaultProxy(upstream: server.endpoint, share: 0, options: ["--keep-host"])
        let backend = try Self.backend(through: proxy, prefix: "batch")
        #expect(backend.capabilities.maxDeleteBatch == 1000)

        let paths = try (names + ["DCIM/never-there.jpg"]).map { try RelativePath($0) }
        let failures = try await backend.deleteFiles(paths)
        #expect(failures.isEmpty, "\(failures)")
        #expect(Self.deleteObjectsRequests(proxy).count == 2, "\(proxy.requests.suffix(5))")
        #expect(Self.singleDeletes(proxy).isEmpty)
        #expect(try await backend.listTree(.root).isEmpty)
    }

    @Test("a key the store's policy refuses fails alone, as a permanent 'access denied'; the others are gone")
    func refusedKeyFailsAlone() async throws {
        let server = try await S3TestServer(.moto)
        try await Self.fill(server, prefix: "denied", names: ["a.jpg", "keep-me.jpg", "b.jpg"])
        let proxy = try await FaultProxy(upstream: server.endpoint, share: 0, options: ["--deny-delete", "keep-me"])
        let backend = try Self.backend(through: proxy, prefix: "denied")
        let failures = try await backend.deleteFiles(try ["a.jpg", "keep-me.jpg", "b.jpg"].map { try RelativePath($0) })
        #expect(failures.keys.map(\.string) == ["keep-me.jpg"])
        let error = try #require(failures[try RelativePath("keep-me.jpg")])
        #expect(error.code == .permissionDenied && !error.isRetryable, "\(error)")
        #expect(error.path == "keep-me.jpg")
        #expect(try await backend.listTree(.root).map(\.path.string) == ["keep-me.jpg"])
        #expect(proxy.requests.contains { $0.contains("?delete") && $0.hasSuffix("denied 1 200") }, "\(proxy.requests)")
    }

    @Test("a store answering 501 NotImplemented to DeleteObjects gets one DELETE per key, and is not asked again")
    func notImplementedFallsBack() async throws {
        let server = try await S3TestServer(.moto)
        try await Self.fill(server, prefix: "fallback", names: ["1.jpg", "2.jpg", "3.jpg", "4.jpg", "5.jpg"])
        let proxy = try await FaultProxy(upstream: server.endpoint, share: 0, options: ["--script", "POST=501"])
        let backend = try Self.backend(through: proxy, prefix: "fallback")

        let first = try await backend.deleteFiles(try ["1.jpg", "2.jpg", "3.jpg"].map { try RelativePath($0) })
        #expect(first.isEmpty, "\(first)")
        #expect(Self.deleteObjectsRequests(proxy).count == 1)
        #expect(Self.singleDeletes(proxy).count == 3)
        #expect(backend.capabilities.maxDeleteBatch == 1, "the core now sends deletes as separate jobs")

        let second = try await backend.deleteFiles(try ["4.jpg", "5.jpg"].map { try RelativePath($0) })
        #expect(second.isEmpty, "\(second)")
        #expect(Self.deleteObjectsRequests(proxy).count == 1, "remembered: no second DeleteObjects")
        #expect(Self.singleDeletes(proxy).count == 5)
        #expect(try await backend.listTree(.root).isEmpty)
    }
}
