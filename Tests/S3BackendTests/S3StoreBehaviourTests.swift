import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Testing

@testable import S3Backend

/// What the conformance suite does not ask: listings over many pages, refusals that must
/// be permanent and say what to check, and the stored modification time coming back.
@Suite("S3 store behaviour", .serialized, .integration)
struct S3StoreBehaviourTests {
    static func upload(_ backend: S3Backend, _ name: String, size: Int, seed: UInt64, in scratch: TemporaryDirectory,
                       modified: Double = 1_650_000_000.123456789) async throws -> UploadRequest {
        let local = scratch.child("src-\(seed)")
        try TreeGenerator.write(at: local, size: size, seed: seed, modified: modified)
        let nanos = try #require(try LocalFileSystem.metadata(local)).modifiedNanos
        let request = UploadRequest(source: local, destination: try RelativePath(name), size: Int64(size), modifiedNanos: nanos, mayResume: false)
        _ = try await backend.upload(request, observer: NullTransferObserver())
        return request
    }

    @Test("a folder listed over many pages (continuation tokens) lists every file once", arguments: S3TestServer.Kind.singleProcess)
    func pagedListing(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        var backend = try server.backend(prefix: "paged")
        backend.listPageSize = 3
        let scratch = TemporaryDirectory("ferry-s3-paged")
        var names: [String] = []
        for index in 0..<11 {
            names.append("f\(index).jpg")
            _ = try await Self.upload(backend, "f\(index).jpg", size: 10 + index, seed: UInt64(index), in: scratch)
        }
        _ = try await Self.upload(backend, "sub/inner.jpg", size: 5, seed: 99, in: scratch)
        let listed = try await backend.list(.root)
        #expect(listed.filter { $0.kind == .file }.map(\.path.name).sorted() == names.sorted())
        #expect(listed.filter { $0.kind == .directory }.map(\.path.name) == ["sub"])
        #expect(listed.allSatisfy { $0.kind == .directory || $0.etag != nil })
    }

    @Test("a download gives back the modification time stored with the object", arguments: S3TestServer.Kind.singleProcess)
    func modificationTimeComesBack(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        let backend = try server.backend(prefix: "mtime")
        let scratch = TemporaryDirectory("ferry-s3-mtime")
        let request = try await Self.upload(backend, "a/b.jpg", size: 5000, seed: 7, in: scratch)
        let listed = try #require(try await backend.list(try RelativePath("a")).first)
        let partial = scratch.child("partial")
        _ = FileManager.default.createFile(atPath: partial, contents: nil)
        let result = try await backend.download(DownloadRequest(source: listed.path, partialFile: partial, offset: 0, expected: listed),
                                                observer: NullTransferObserver())
        #expect(result.entry.modifiedNanos == request.modifiedNanos)
        #expect(result.entry.etag == listed.etag)
    }

    @Test("the time is stored as rclone stores it, and times rclone or earlier Ferry builds stored come back", arguments: S3TestServer.Kind.singleProcess)
    func modificationTimeAsRcloneWritesIt(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        let backend = try server.backend(prefix: "mtime-format")
        let scratch = TemporaryDirectory("ferry-s3-mtime-format")
        let request = try await Self.upload(backend, "ferry.jpg", size: 100, seed: 3, in: scratch)
        let written = try await backend.send("HEAD", url: backend.addressing.objectURL(key: backend.addressing.key(try RelativePath("ferry.jpg"))),
                                             responseBody: .discard)
        let seconds = request.modifiedNanos / 1_000_000_000
        let fraction = String(request.modifiedNanos % 1_000_000_000)
        #expect(written.header("x-amz-meta-mtime") == "\(seconds)." + String(repeating: "0", count: 9 - fraction.count) + fraction)

        let stored: [(name: String, header: String, nanos: Int64)] = [
            ("rclone.jpg", "1709633472.123456789", 1_709_633_472_123_456_789),
            ("rclone-short.jpg", "1709633472.5", 1_709_633_472_500_000_000),
            ("seconds.jpg", "1709633472", 1_709_633_472_000_000_000),
            ("earlier-ferry.jpg", "1709633472123456789", 1_709_633_472_123_456_789),
        ]
        for object in stored {
            let put = try await backend.send("PUT", url: backend.addressing.objectURL(key: backend.addressing.key(try RelativePath(object.name))),
                                             headers: [("x-amz-meta-mtime", object.header)], body: .data(Data("x".utf8)))
            #expect(put.isSuccess, "\(put.status)")
            let entry = try #require(try await backend.stat(try RelativePath(object.name)))
            #expect(entry.modifiedNanos == object.nanos, "\(object.header)")
        }
    }

    @Test("a wrong secret is a permanent authentication failure that names what to check, never the secret")
    func wrongSecret() async throws {
        let server = try await S3TestServer(.seaweedfs)
        let backend = try server.backend(prefix: "x", secret: "wrong-secret-value")
        do {
            _ = try await backend.list(.root)
            Issue.record("a wrong secret listed the bucket")
        } catch {
            #expect(error.code == .authenticationFailed)
            #expect(!error.isRetryable)
            #expect(error.message.contains("check the secret key"))
            #expect(!error.description.contains("wrong-secret-value"))
        }
    }

    @Test("a missing bucket is a permanent error, never an empty folder", arguments: S3TestServer.Kind.singleProcess)
    func missingBucket(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        let addressing = try S3Addressing(endpoint: server.endpoint, bucket: "no-such-bucket", prefix: "", virtualHost: false)
        let backend = S3Backend(configuration: S3RemoteConfiguration(
            addressing: addressing, region: "us-east-1",
            credentials: S3Credentials(accessKeyID: S3TestServer.accessKey, secretAccessKey: S3TestServer.secretKey, source: "the test")))
        do {
            let entries = try await backend.listTree(.root)
            Issue.record("a missing bucket listed as \(entries.count) files")
        } catch {
            #expect(error.code != .notFound)
            #expect(!error.isRetryable)
            #expect(error.message.contains("does not exist"))
        }
    }

    @Test("the probe finds ListObjectsV2, conditional writes and checkable multipart ETags, and leaves nothing behind",
          arguments: S3TestServer.Kind.singleProcess)
    func probe(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        let backend = try server.backend(prefix: "probe")
        let features = try await backend.storeFeatures()
        #expect(features == S3StoreFeatures(listObjectsV2: true, conditionalWrites: true, multipartETags: true))
        #expect(try await backend.list(.root).isEmpty)
    }

    @Test("an upload of a file the listing did not have never replaces an object another writer created meanwhile",
          arguments: S3TestServer.Kind.singleProcess)
    func conditionalCreate(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        let backend = try server.backend(prefix: "race")
        let scratch = TemporaryDirectory("ferry-s3-race")
        let theirs = try await Self.upload(backend, "IMG_1.jpg", size: 3000, seed: 1, in: scratch)
        let local = scratch.child("mine")
        try TreeGenerator.write(at: local, size: 2000, seed: 2)
        let nanos = try #require(try LocalFileSystem.metadata(local)).modifiedNanos
        let mine = UploadRequest(source: local, destination: try RelativePath("IMG_1.jpg"), size: 2000, modifiedNanos: nanos,
                                 mayResume: false, expectsNewFile: true)
        do {
            _ = try await backend.upload(mine, observer: NullTransferObserver())
            Issue.record("the upload replaced another writer's new object")
        } catch {
            #expect(error.code == .alreadyExists)
        }
        #expect(try await backend.stat(theirs.destination)?.size == 3000)
        _ = try await backend.upload(UploadRequest(source: local, destination: try RelativePath("IMG_2.jpg"), size: 2000,
                                                   modifiedNanos: nanos, mayResume: false, expectsNewFile: true),
                                     observer: NullTransferObserver())
        #expect(try await backend.stat(try RelativePath("IMG_2.jpg"))?.size == 2000)
    }

    @Test("a replacing write made on the listed ETag never replaces a version another writer put there meanwhile",
          arguments: S3TestServer.Kind.singleProcess)
    func conditionalReplace(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        let backend = try server.backend(prefix: "replace")
        let scratch = TemporaryDirectory("ferry-s3-replace")
        let listed = try await Self.upload(backend, "IMG_1.jpg", size: 1000, seed: 1, in: scratch)
        let listedETag = try #require(try await backend.stat(listed.destination)?.etag)
        _ = try await Self.upload(backend, "IMG_1.jpg", size: 3000, seed: 2, in: scratch)
        var mine = try await Self.upload(backend, "IMG_2.jpg", size: 2000, seed: 3, in: scratch)
        mine.destination = listed.destination
        mine.replacedETag = listedETag
        do {
            _ = try await backend.upload(mine, observer: NullTransferObserver())
            Issue.record("the write replaced a version the listing never saw")
        } catch {
            #expect(error.code == .alreadyExists, "\(error)")
        }
        #expect(try await backend.stat(listed.destination)?.size == 3000)
        mine.replacedETag = try #require(try await backend.stat(listed.destination)?.etag)
        _ = try await backend.upload(mine, observer: NullTransferObserver())
        #expect(try await backend.stat(listed.destination)?.size == 2000)
    }

    @Test("a failed download never leaves the store's error body in the partial file",
          arguments: S3TestServer.Kind.singleProcess)
    func failedDownloadLeavesThePartialFile(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        let backend = try server.backend(prefix: "gone")
        let scratch = TemporaryDirectory("ferry-s3-gone")
        let missing = RemoteEntry(path: try RelativePath("IMG_9.jpg"), kind: .file, size: 100_000, modifiedNanos: nil, etag: "\"abc\"")
        for offset in [0, 1000] {
            let partial = scratch.child("partial-\(offset)")
            let start = Data(repeating: 0x5A, count: offset)
            try start.write(to: URL(fileURLWithPath: partial))
            do {
                _ = try await backend.download(DownloadRequest(source: missing.path, partialFile: partial, offset: Int64(offset),
                                                               expected: missing), observer: NullTransferObserver())
                Issue.record("a missing object downloaded")
            } catch {
                #expect(error.code == .notFound, "\(error)")
            }
            let left = try Data(contentsOf: URL(fileURLWithPath: partial))
            // What was there, or nothing (a failed range is retried from the start): never the error's XML.
            #expect(left == start || left.isEmpty, "offset \(offset): \(left.count) bytes: \(String(decoding: left.prefix(200), as: UTF8.self))")
        }
    }
}
