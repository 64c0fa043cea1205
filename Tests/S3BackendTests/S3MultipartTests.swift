import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import S3Backend

/// An observer that asks the transfer to stop once `limit` bytes went out, and keeps the
/// last checkpoint it was given, as the journal does.
final class StopAfterBytes: TransferObserver {
    private let sent = Mutex<Int64>(0)
    private let checkpoint = Mutex<String?>(nil)
    let limit: Int64
    init(limit: Int64 = .max) { self.limit = limit }
    func bytesTransferred(_ count: Int) -> Duration {
        sent.withLock { $0 += Int64(count) }
        return .zero
    }
    var isCancelled: Bool { sent.withLock { $0 } > limit }
    func uploadCheckpoint(_ state: String) async { checkpoint.withLock { $0 = state } }
    var lastCheckpoint: String? { checkpoint.withLock { $0 } }
}

/// Large files in parts: the object, its ETag and time; an interrupted upload continued
/// from the parts the store holds.
@Suite("S3 multipart uploads", .serialized, .integration)
struct S3MultipartTests {
    static let part: Int64 = 5 << 20
    static let size = Int(3 * part + (1 << 20))

    static func settings(concurrency: Int) -> MultipartSettings {
        var settings = MultipartSettings()
        settings.threshold = part
        settings.partSize = part
        settings.concurrency = concurrency
        return settings
    }

    static func backend(_ server: S3TestServer, prefix: String, concurrency: Int) throws -> S3Backend {
        let plain = try server.backend(prefix: prefix)
        return S3Backend(configuration: plain.configuration, multipart: settings(concurrency: concurrency))
    }

    static func source(_ scratch: TemporaryDirectory, seed: UInt64) throws -> (path: String, nanos: Int64) {
        let path = scratch.child("big-\(seed).mov")
        try TreeGenerator.write(at: path, size: size, seed: seed, modified: 1_700_000_000.5)
        return (path, try #require(try LocalFileSystem.metadata(path)).modifiedNanos)
    }

    @Test("a file above the threshold goes in parallel parts and comes back whole, with its time", arguments: S3TestServer.Kind.singleProcess)
    func roundTrip(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        let backend = try Self.backend(server, prefix: "mp", concurrency: 4)
        let scratch = TemporaryDirectory("ferry-s3-mp")
        let (path, nanos) = try Self.source(scratch, seed: 3)
        let request = UploadRequest(source: path, destination: try RelativePath("v/big.mov"), size: Int64(Self.size),
                                    modifiedNanos: nanos, mayResume: false)
        let result = try await backend.upload(request, observer: NullTransferObserver())
        #expect(result.entry.etag?.hasSuffix("-4\"") == true, "\(String(describing: result.entry.etag))")
        let listed = try #require(try await backend.list(try RelativePath("v")).first)
        #expect(listed.etag == result.entry.etag)
        #expect(listed.size == Int64(Self.size))
        let partial = scratch.child("partial")
        _ = FileManager.default.createFile(atPath: partial, contents: nil)
        let download = try await backend.download(DownloadRequest(source: listed.path, partialFile: partial, offset: 0, expected: listed),
                                                  observer: NullTransferObserver())
        #expect(download.entry.modifiedNanos == nanos)
        #expect(try TreeComparison.sameContent(path, partial))
        #expect(try await backend.uploadsInProgress(prefix: "mp/", path: .root).isEmpty)
    }

    @Test("an interrupted upload is continued: only the parts the store lacks are sent", arguments: S3TestServer.Kind.singleProcess)
    func resume(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        let backend = try Self.backend(server, prefix: "resume", concurrency: 1)
        let scratch = TemporaryDirectory("ferry-s3-resume")
        let (path, nanos) = try Self.source(scratch, seed: 4)
        let destination = try RelativePath("big.mov")
        let first = UploadRequest(source: path, destination: destination, size: Int64(Self.size), modifiedNanos: nanos, mayResume: false)
        // Stopped while part 3 is on its way: parts 1 and 2 were acknowledged before it started.
        await #expect(throws: BackendError.self) {
            _ = try await backend.upload(first, observer: StopAfterBytes(limit: 2 * Self.part + (1 << 20)))
        }
        let key = backend.addressing.key(destination)
        let uploads = try await backend.uploadsInProgress(key: key, path: destination)
        #expect(uploads.count == 1)
        let held = try await backend.partsHeld(key: key, uploadID: try #require(uploads.first).uploadID, path: destination)
        #expect(held.keys.sorted() == [1, 2])
        #expect(try await backend.stat(destination) == nil, "an unfinished upload is visible")

        var again = first
        again.mayResume = true
        let result = try await backend.upload(again, observer: NullTransferObserver())
        #expect(result.resumedFrom == 2 * Self.part)
        #expect(result.bytesSent == Int64(Self.size) - 2 * Self.part)
        #expect(try await backend.stat(destination)?.etag == result.entry.etag)
        #expect(try await backend.uploadsInProgress(key: key, path: destination).isEmpty)
    }

    @Test("an upload of another version does not continue the old one: it is aborted and the file sent whole")
    func anotherVersionStartsOver() async throws {
        let server = try await S3TestServer(.moto)
        let backend = try Self.backend(server, prefix: "over", concurrency: 1)
        let scratch = TemporaryDirectory("ferry-s3-over")
        let (path, nanos) = try Self.source(scratch, seed: 5)
        let request = UploadRequest(source: path, destination: try RelativePath("big.mov"), size: Int64(Self.size),
                                    modifiedNanos: nanos, mayResume: false)
        await #expect(throws: BackendError.self) {
            _ = try await backend.upload(request, observer: StopAfterBytes(limit: Self.part + (1 << 20)))
        }
        let result = try await backend.upload(request, observer: NullTransferObserver())
        #expect(result.resumedFrom == 0)
        #expect(result.bytesSent == Int64(Self.size))
        #expect(try await backend.uploadsInProgress(prefix: "over/", path: .root).isEmpty)
    }

    /// On SeaweedFS: moto dates every upload 2010-11-10.
    @Test("uploads left unfinished longer than the age are aborted, except those the journal means to continue")
    func abandonedUploadsAreAborted() async throws {
        let server = try await S3TestServer(.seaweedfs)
        let backend = try Self.backend(server, prefix: "old", concurrency: 1)
        let scratch = TemporaryDirectory("ferry-s3-old")
        let (path, nanos) = try Self.source(scratch, seed: 6)
        let kept = try RelativePath("kept/big.mov")
        let abandoned = try RelativePath("gone/big.mov")
        for destination in [kept, abandoned] {
            let request = UploadRequest(source: path, destination: destination, size: Int64(Self.size), modifiedNanos: nanos, mayResume: false)
            await #expect(throws: BackendError.self) {
                _ = try await backend.upload(request, observer: StopAfterBytes(limit: 1 << 20))
            }
        }
        #expect(try await backend.uploadsInProgress(prefix: "old/", path: .root).count == 2)

        let now = Int64(Date().timeIntervalSince1970)
        #expect(try await backend.abortAbandonedUploads(below: .root, keeping: [], olderThanSeconds: 3600, now: now).isEmpty)
        let inTwoHours = now + 7200
        // Below another folder: nothing there.
        #expect(try await backend.abortAbandonedUploads(below: try RelativePath("elsewhere"), keeping: [], olderThanSeconds: 3600,
                                                        now: inTwoHours).isEmpty)
        let aborted = try await backend.abortAbandonedUploads(below: .root, keeping: [kept], olderThanSeconds: 3600, now: inTwoHours)
        #expect(aborted.map(\.path) == [abandoned])
        let left = try await backend.uploadsInProgress(prefix: "old/", path: .root)
        #expect(left.map(\.key) == ["old/kept/big.mov"])

        // Never on its own when the remote says so (abandoned_uploads_after: 0).
        var never = MultipartSettings()
        never.abandonAfterSeconds = nil
        let patient = S3Backend(configuration: backend.configuration, multipart: never)
        #expect(try await patient.abortAbandonedUploads(below: .root, keeping: [], olderThanSeconds: nil).isEmpty)
        // With an age given (ferry doctor --cleanup --older-than 0): all that is not kept.
        let all = try await patient.abortAbandonedUploads(below: .root, keeping: [], olderThanSeconds: 0)
        #expect(all.map(\.path) == [kept])
        #expect(try await backend.uploadsInProgress(prefix: "old/", path: .root).isEmpty)
    }

    /// An upload to moto stopped once `parts` parts were acknowledged, and the last
    /// checkpoint it reported.
    struct InterruptedUpload {
        let server: S3TestServer
        let backend: S3Backend
        let scratch: TemporaryDirectory
        let request: UploadRequest
        let key: String
        let state: String
        let checkpoint: MultipartCheckpoint
    }

    static func interruptedUpload(prefix: String, seed: UInt64, parts: Int64) async throws -> InterruptedUpload {
        let server = try await S3TestServer(.moto)
        let backend = try Self.backend(server, prefix: prefix, concurrency: 1)
        let scratch = TemporaryDirectory("ferry-s3-\(prefix)")
        let (path, nanos) = try Self.source(scratch, seed: seed)
        let destination = try RelativePath("big.mov")
        let key = backend.addressing.key(destination)
        let request = UploadRequest(source: path, destination: destination, size: Int64(Self.size), modifiedNanos: nanos, mayResume: false)
        let stopped = StopAfterBytes(limit: parts * Self.part + (1 << 20))
        await #expect(throws: BackendError.self) { _ = try await backend.upload(request, observer: stopped) }
        let state = try #require(stopped.lastCheckpoint)
        return InterruptedUpload(server: server, backend: backend, scratch: scratch, request: request, key: key, state: state,
                                 checkpoint: try #require(MultipartCheckpoint(text: state, key: key)))
    }

    @Test("the checkpoint names the upload and each part the store acknowledged; that upload is continued, not another writer's")
    func checkpointedUploadIsContinued() async throws {
        let interrupted = try await Self.interruptedUpload(prefix: "checkpoint", seed: 7, parts: 2)
        let (backend, checkpoint, destination) = (interrupted.backend, interrupted.checkpoint, interrupted.request.destination)
        let held = try await backend.partsHeld(key: interrupted.key, uploadID: checkpoint.uploadID, path: destination)
        #expect(checkpoint.parts.map(\.number) == [1, 2])
        #expect(checkpoint.etags == held.mapValues(\.etag))
        #expect(checkpoint.partSize == Self.part)

        // Another writer starts an upload of the same key afterwards: without the
        // checkpoint the newest upload would be taken (and the two parts sent again).
        interrupted.server.startUpload(key: interrupted.key)
        var again = interrupted.request
        again.mayResume = true
        again.resumeState = interrupted.state
        let result = try await backend.upload(again, observer: NullTransferObserver())
        #expect(result.resumedFrom == 2 * Self.part)
        #expect(result.bytesSent == Int64(Self.size) - 2 * Self.part)
        let left = try await backend.uploadsInProgress(key: interrupted.key, path: destination)
        #expect(left.count == 1 && left.first?.uploadID != checkpoint.uploadID, "the other writer's upload is left alone: \(left)")
    }

    @Test("a checkpoint of another version has its upload aborted, and one the store no longer has starts over")
    func checkpointOfAnotherVersionOrAGoneUpload() async throws {
        let interrupted = try await Self.interruptedUpload(prefix: "stale", seed: 8, parts: 1)
        let backend = interrupted.backend
        var anotherVersion = interrupted.request
        anotherVersion.resumeState = interrupted.state
        let sentWhole = try await backend.upload(anotherVersion, observer: NullTransferObserver())
        #expect(sentWhole.resumedFrom == 0 && sentWhole.bytesSent == Int64(Self.size))
        #expect(try await backend.uploadsInProgress(key: interrupted.key, path: anotherVersion.destination).isEmpty,
                "the old version's upload is aborted")

        // The same version, but its upload was aborted (by doctor --cleanup, another tool).
        var gone = interrupted.request
        gone.mayResume = true
        gone.resumeState = interrupted.state
        let fresh = StopAfterBytes()
        let startedOver = try await backend.upload(gone, observer: fresh)
        #expect(startedOver.resumedFrom == 0 && startedOver.bytesSent == Int64(Self.size))
        let last = try #require(fresh.lastCheckpoint.flatMap { MultipartCheckpoint(text: $0, key: interrupted.key) })
        #expect(last.uploadID != interrupted.checkpoint.uploadID && last.parts.map(\.number) == [1, 2, 3, 4])
    }

    @Test("a multipart upload of a file the listing did not have never replaces an object another writer created meanwhile",
          arguments: S3TestServer.Kind.singleProcess)
    func conditionalCompletion(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        let backend = try Self.backend(server, prefix: "race", concurrency: 2)
        let scratch = TemporaryDirectory("ferry-s3-mp-race")
        let theirs = scratch.child("theirs")
        try TreeGenerator.write(at: theirs, size: 3000, seed: 9)
        let destination = try RelativePath("big.mov")
        _ = try await backend.upload(UploadRequest(source: theirs, destination: destination, size: 3000,
                                                   modifiedNanos: try #require(try LocalFileSystem.metadata(theirs)).modifiedNanos,
                                                   mayResume: false),
                                     observer: NullTransferObserver())
        let (path, nanos) = try Self.source(scratch, seed: 10)
        let mine = UploadRequest(source: path, destination: destination, size: Int64(Self.size), modifiedNanos: nanos, mayResume: false,
                                 expectsNewFile: true)
        do {
            _ = try await backend.upload(mine, observer: NullTransferObserver())
            Issue.record("the multipart upload replaced another writer's new object")
        } catch {
            #expect(error.code == .alreadyExists, "\(error)")
        }
        #expect(try await backend.stat(destination)?.size == 3000)
    }

    /// On SeaweedFS only: moto 5.2 ignores `If-Match` on CompleteMultipartUpload (it honours
    /// it on PUT, and `If-None-Match` on both). A two-way sync on such a store relies on
    /// its write lease.
    @Test("a multipart upload made on the listed ETag never replaces a version another writer put there meanwhile")
    func conditionalReplacingCompletion() async throws {
        let server = try await S3TestServer(.seaweedfs)
        let backend = try Self.backend(server, prefix: "replace", concurrency: 2)
        let scratch = TemporaryDirectory("ferry-s3-mp-replace")
        let destination = try RelativePath("big.mov")
        var listedETag: String?
        for (seed, size) in [(UInt64(11), 1000), (12, 3000)] {
            let theirs = scratch.child("theirs-\(seed)")
            try TreeGenerator.write(at: theirs, size: size, seed: seed)
            _ = try await backend.upload(UploadRequest(source: theirs, destination: destination, size: Int64(size),
                                                       modifiedNanos: try #require(try LocalFileSystem.metadata(theirs)).modifiedNanos,
                                                       mayResume: false),
                                         observer: NullTransferObserver())
            if listedETag == nil { listedETag = try await backend.stat(destination)?.etag }
        }
        let (path, nanos) = try Self.source(scratch, seed: 10)
        var mine = UploadRequest(source: path, destination: destination, size: Int64(Self.size), modifiedNanos: nanos, mayResume: false)
        #expect(listedETag != nil)
        mine.replacedETag = listedETag
        do {
            _ = try await backend.upload(mine, observer: NullTransferObserver())
            Issue.record("the multipart upload replaced a version the listing never saw")
        } catch {
            #expect(error.code == .alreadyExists, "\(error)")
        }
        #expect(try await backend.stat(destination)?.size == 3000)
    }

    /// Notes whether the ledger of a ranged download (which only the parallel streams keep)
    /// was beside the partial file while bytes came in.
    final class LedgerWatcher: TransferObserver {
        let ledger: String
        let seen = Mutex(false)
        init(partialFile: String) { ledger = PartialFileLedger.path(forPartial: partialFile) }
        func bytesTransferred(_ count: Int) -> Duration {
            if FileManager.default.fileExists(atPath: ledger) { seen.withLock { $0 = true } }
            return .zero
        }
        var isCancelled: Bool { false }
    }

    @Test("a large object comes back over ranged streams, whole and with its time", arguments: S3TestServer.Kind.singleProcess)
    func parallelPull(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        let plain = try server.backend(prefix: "ranged")
        let backend = S3Backend(configuration: plain.configuration, multipart: Self.settings(concurrency: 4),
                                downloadStreams: 4, multiStreamCutoff: 1 << 20)
        let scratch = TemporaryDirectory("ferry-s3-ranged")
        let (path, nanos) = try Self.source(scratch, seed: 11)
        let destination = try RelativePath("big.mov")
        _ = try await backend.upload(UploadRequest(source: path, destination: destination, size: Int64(Self.size), modifiedNanos: nanos,
                                                   mayResume: false), observer: NullTransferObserver())
        let listed = try #require(try await backend.list(.root).first)
        let partial = scratch.child("partial")
        _ = FileManager.default.createFile(atPath: partial, contents: nil)
        let watcher = LedgerWatcher(partialFile: partial)
        let result = try await backend.download(DownloadRequest(source: listed.path, partialFile: partial, offset: 0, expected: listed),
                                                observer: watcher)
        #expect(watcher.seen.withLock { $0 }, "the download did not go over ranged streams")
        #expect(result.entry.modifiedNanos == nanos)
        #expect(result.bytesReceived == Int64(Self.size))
        #expect(try TreeComparison.sameContent(path, partial))
        #expect(!FileManager.default.fileExists(atPath: watcher.ledger))
    }
}
