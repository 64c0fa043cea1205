@testable import FerryJournal
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Synchronization
import Testing

import FerryConfig
@testable import FerryCore
@testable import FerryEngine
@testable import FerryPlanning

/// An in-memory backend that sends small files on the caller's blocking thread, as S3
/// does, and counts which way each upload went.
final class DirectInMemoryBackend: DirectUploadBackend, WrapsBackend {
    let inner = InMemoryBackend()
    /// Paths sent through `uploadNow` and through `upload`, in order.
    let directSends = Mutex<[String]>([])
    let usualSends = Mutex<[String]>([])
    /// The next direct sends of a path fail with these errors.
    let directFailures = Mutex<[String: [BackendError]]>([:])
    /// Paths whose direct send declines (as WebDAV does into a folder not yet created).
    let declined = Mutex<Set<String>>([])

    var directUploadLimit: Int64 { 1 << 20 }

    func uploadNow(_ request: UploadRequest, observer: any TransferObserver) throws(BackendError) -> UploadResult? {
        let path = request.destination.string
        if declined.withLock({ $0.contains(path) }) { return nil }
        directSends.withLock { $0.append(path) }
        if let failure = directFailures.withLock({ $0[path]?.isEmpty == false ? $0[path]!.removeFirst() : nil }) { throw failure }
        guard let metadata = try BackendError.catching({ try LocalFileSystem.metadata(request.source) }),
              metadata.size == request.size, metadata.modifiedNanos == request.modifiedNanos,
              let data = FileManager.default.contents(atPath: request.source) else {
            throw BackendError(.changedDuringTransfer, "the file changed since it was scanned", path: request.source)
        }
        inner.put(path, data, modifiedNanos: request.modifiedNanos)
        let file = inner.files[path]!
        return UploadResult(entry: RemoteEntry(path: request.destination, kind: .file, size: Int64(data.count),
                                               modifiedNanos: file.modifiedNanos, etag: file.etag),
                            bytesSent: Int64(data.count), resumedFrom: 0, verifiedSource: true)
    }

    func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        usualSends.withLock { $0.append(request.destination.string) }
        return try await inner.upload(request, observer: observer)
    }
}

@Suite("small files sent in one trip to a blocking thread")
struct DirectUploadTests {
    static func push(_ backend: DirectInMemoryBackend, _ folder: TemporaryDirectory) async throws -> RunSummary {
        var config = Config.defaults
        config.retry = RetryPolicy(attempts: 3, baseDelay: .seconds(1), factor: 2, maxDelay: .seconds(30))
        var options = RunOptions()
        options.clock = InstantClock()
        options.transfers = 4
        let pair = FolderPair(name: "test", localRoot: folder.child("src"), backend: backend, remoteRoot: .root, mode: .push, ignore: [])
        return try await PairRun(pair: pair, config: config, state: StateFolder(directory: folder.child("state")), options: options,
                                 sink: RecordingSink(), progress: RunProgress()).run()
    }

    static func records(_ folder: TemporaryDirectory) async throws -> [String: FileRecord] {
        let journal = try #require(try await StateFolder(directory: folder.child("state")).existingJournal())
        let pair = try #require(try await journal.folderPairs().first)
        return Dictionary(uniqueKeysWithValues: try await journal.records(pairId: try #require(pair.id)).map { ($0.path, $0) })
    }

    @Test("first attempts of small files go directly; a large file, a retry and a declined send go the usual way; every row ends in sync")
    func directAndUsual() async throws {
        let folder = TemporaryDirectory("ferry-direct")
        let small = (0..<20).map { "d\($0 % 3)/IMG_\($0).jpg" }
        for (index, path) in small.enumerated() {
            try TreeGenerator.write(at: folder.child("src/" + path), size: 4096 + index, seed: UInt64(index))
        }
        try TreeGenerator.write(at: folder.child("src/VID.mp4"), size: 1 << 20, seed: 99)
        let backend = DirectInMemoryBackend()
        backend.directFailures.withLock { $0["d1/IMG_1.jpg"] = [BackendError(.serverError, "503 slow down", retryable: true)] }
        backend.declined.withLock { $0 = ["d2/IMG_2.jpg"] }

        let summary = try await Self.push(backend, folder)
        #expect(summary.uploadedFiles == 21 && summary.failedFiles == 0)
        let direct = small.filter { $0 != "d2/IMG_2.jpg" }
        #expect(Set(backend.directSends.withLock { $0 }) == Set(direct))
        #expect(backend.directSends.withLock { $0 }.count == direct.count, "each small file went directly once")
        #expect(backend.usualSends.withLock { $0 }.sorted() == ["VID.mp4", "d1/IMG_1.jpg", "d2/IMG_2.jpg"],
                "the large file, the retry after a failed direct send (which first looks for what landed), and the declined one")
        let records = try await Self.records(folder)
        for path in small + ["VID.mp4"] {
            let record = try #require(records[path])
            #expect(record.status == .inSync, "\(path)")
            let stored = try #require(backend.inner.files[path])
            #expect(stored.data == FileManager.default.contents(atPath: folder.child("src/" + path)), "\(path)")
            #expect(record.remote?.etag == stored.etag)
            #expect(record.local?.modifiedNanos == stored.modifiedNanos)
        }
    }
}
