@testable import FerryEncryption
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import LocalBackend
import Synchronization
import Testing

/// Downloads read a window of segments at a time where the backend underneath reads
/// ranges, and continue an interrupted one at a segment instead of from the start.
@Suite struct EncryptedRangedDownloadTests {
    let directory = TemporaryDirectory("ferry-encryption-ranged")
    static let segment = Int64(ContentFormat.segmentSize)
    static let window = SegmentWindows.segmentsPerWindow * segment

    /// A local remote that counts ranged reads and whole downloads, and can fail a read.
    final class CountingBackend: WrapsBackend, Sendable {
        let inner: LocalBackend
        struct Counts {
            var reads: [Range<Int64>] = [], downloads = 0
            /// The read that fails: the one starting at this stored offset (windows are
            /// read several at once, so not the n-th call).
            var failAt: Int64?, failure: BackendError?
        }
        let counts = Mutex(Counts())

        init(root: String) { inner = LocalBackend(root: root) }

        func read(_ path: RelativePath, range: Range<Int64>, expected: RemoteEntry,
                  observer: any TransferObserver) async throws(BackendError) -> Data {
            let failure = counts.withLock { counts -> BackendError? in
                counts.reads.append(range)
                return range.lowerBound == counts.failAt ? counts.failure : nil
            }
            if let failure { throw failure }
            return try await inner.read(path, range: range, expected: expected, observer: observer)
        }

        func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
            counts.withLock { $0.downloads += 1 }
            return try await inner.download(request, observer: observer)
        }

        func failRead(at offset: Int64?, with error: BackendError? = nil) {
            counts.withLock { $0 = Counts(failAt: offset, failure: error) }
        }
    }

    func make() throws -> (EncryptedBackend, CountingBackend) {
        let key = directory.child("key")
        if !FileManager.default.fileExists(atPath: key) { try MasterKey.generate(at: key) }
        let counting = CountingBackend(root: directory.child("remote"))
        let backend = try EncryptedBackend(wrapping: counting, settings: EncryptionSettings(key: .keyFile(key), names: .encrypted),
                                           remoteName: "vault")
        return (backend, counting)
    }

    func content(_ size: Int64, seed: UInt8 = 7) -> [UInt8] {
        (0..<Int(size)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &+ $0 >> 16) }
    }

    func send(_ backend: EncryptedBackend, _ name: String, _ bytes: [UInt8]) async throws {
        let source = directory.child("source-\(name)")
        try Data(bytes).write(to: URL(fileURLWithPath: source))
        try LocalFileSystem.setModificationTime(source, nanos: 1_700_000_000_000_000_000)
        _ = try await backend.upload(UploadRequest(source: source, destination: try RelativePath(name), size: Int64(bytes.count),
                                                   modifiedNanos: 1_700_000_000_000_000_000, mayResume: false),
                                     observer: NullTransferObserver())
    }

    /// Downloads `name` into `partial` (made empty if missing), continuing from what it holds.
    func fetch(_ backend: EncryptedBackend, _ name: String, into partial: String) async throws -> DownloadResult {
        if !FileManager.default.fileExists(atPath: partial) { _ = FileManager.default.createFile(atPath: partial, contents: nil) }
        let offset = Int64(try Data(contentsOf: URL(fileURLWithPath: partial)).count)
        let entry = try #require(try await backend.stat(try RelativePath(name)))
        return try await backend.download(DownloadRequest(source: try RelativePath(name), partialFile: partial, offset: offset, expected: entry),
                                          observer: NullTransferObserver())
    }

    func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test("windows cover every segment once, in order, from the segment that holds the first missing byte",
          arguments: [(0, 0), (1, 0), (Self.segment, 0), (Self.segment + 1, Self.segment), (3 * Self.window + 5, Self.window + 17),
                      (3 * Self.window, 3 * Self.window), (2 * Self.window, 2 * Self.segment - 1)] as [(Int64, Int64)])
    func windowArithmetic(size: Int64, resumeAt: Int64) {
        let windows = SegmentWindows(plaintextSize: size, resumeAt: resumeAt)
        let all = Array(windows)
        let count = ContentFormat.segmentCount(plaintextSize: size)
        #expect(windows.keptBytes % Self.segment == 0 && windows.keptBytes <= resumeAt)
        #expect(windows.keptBytes > resumeAt - Self.segment || resumeAt >= size)
        #expect(all.first?.segments.lowerBound == windows.firstSegment)
        #expect(all.last?.segments.upperBound == count)
        #expect(all.filter(\.includesLast).count == 1 && all.last?.includesLast == true)
        for (earlier, later) in zip(all, all.dropFirst()) {
            #expect(earlier.segments.upperBound == later.segments.lowerBound)
            #expect(earlier.stored.upperBound == later.stored.lowerBound)
        }
        #expect(all.last?.stored.upperBound == ContentFormat.ciphertextSize(plaintextSize: size))
        #expect(all.first?.stored.lowerBound
                == Int64(ContentFormat.headerSize) + windows.firstSegment * Int64(ContentFormat.segmentSize + ContentFormat.tagSize))
        #expect(all.first?.plaintextOffset == windows.keptBytes)
    }

    @Test("a large file is read a window at a time, never fetched whole; a small one is fetched whole")
    func readsByWindows() async throws {
        let (backend, counting) = try make()
        let large = content(2 * Self.window + 12_345)
        try await send(backend, "large.mp4", large)
        try await send(backend, "small.jpg", content(200_000, seed: 3))
        counting.failRead(at: nil)

        let result = try await fetch(backend, "large.mp4", into: directory.child("large.part"))
        #expect(try bytes(directory.child("large.part")) == large)
        #expect(result.resumedFrom == 0 && result.bytesReceived == Int64(large.count))
        let counts = counting.counts.withLock { $0 }
        #expect(counts.downloads == 0)
        #expect(counts.reads.count == 1 + 3, "the header, then three windows: \(counts.reads)")

        _ = try await fetch(backend, "small.jpg", into: directory.child("small.part"))
        #expect(try bytes(directory.child("small.part")) == content(200_000, seed: 3))
        #expect(counting.counts.withLock { $0.downloads } == 1)
    }

    @Test("an interrupted download keeps the windows it checked, and the next one continues after them")
    func continuesAfterAnInterruption() async throws {
        let (backend, counting) = try make()
        let large = content(3 * Self.window + 777, seed: 11)
        try await send(backend, "video.mp4", large)
        let partial = directory.child("video.part")
        // The header and the first window succeed; the second window's read fails.
        let secondWindow = Array(SegmentWindows(plaintextSize: Int64(large.count), resumeAt: 0))[1].stored.lowerBound
        counting.failRead(at: secondWindow, with: BackendError(.connectionLost, "the connection dropped", retryable: true))
        let error = await #expect(throws: BackendError.self) { _ = try await fetch(backend, "video.mp4", into: partial) }
        #expect(error?.code == .connectionLost)
        let kept = try bytes(partial)
        #expect(kept.count == Int(Self.window), "the first window only, checked")
        #expect(kept == Array(large.prefix(kept.count)))

        // A crash in the middle of a write may leave part of a segment: it is fetched again.
        try FileHandle(forWritingTo: URL(fileURLWithPath: partial)).truncate(atOffset: UInt64(Self.window - 100))
        counting.failRead(at: nil)
        let result = try await fetch(backend, "video.mp4", into: partial)
        #expect(result.resumedFrom == Self.window - Self.segment)
        #expect(result.resumedFrom + result.bytesReceived == Int64(large.count))
        #expect(try bytes(partial) == large)
        let reads = counting.counts.withLock { $0.reads }
        #expect(reads.first == 0..<Int64(ContentFormat.headerSize))
        #expect(reads.dropFirst().first?.lowerBound
                == Int64(ContentFormat.headerSize) + (Self.window / Self.segment - 1) * Int64(ContentFormat.segmentSize + ContentFormat.tagSize))
    }

    @Test("a segment altered after the point a download continues from fails it, and the partial file is emptied")
    func anAlteredLaterSegmentFails() async throws {
        let (backend, _) = try make()
        let large = content(2 * Self.window + 1, seed: 5)
        try await send(backend, "a.bin", large)
        let stored = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.child("remote"))
            .first { $0 != RemoteKeyHeader.objectName })
        let path = directory.child("remote/" + stored)
        var cipher = try bytes(path)
        cipher[cipher.count - 10] ^= 0x40
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        try Data(cipher).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.modificationDate: attributes[.modificationDate]!], ofItemAtPath: path)

        let partial = directory.child("a.part")
        try Data(large.prefix(Int(Self.window))).write(to: URL(fileURLWithPath: partial))
        let error = await #expect(throws: BackendError.self) { _ = try await fetch(backend, "a.bin", into: partial) }
        #expect(EncryptionFailure.isAuthentication(try #require(error)), "\(String(describing: error))")
        #expect(error?.isRetryable == false)
        #expect(try bytes(partial).isEmpty)
    }

    @Test("a backend whose ranges cannot be tied to the listed version has the file fetched whole")
    func fallsBackToTheWholeFile() async throws {
        let (backend, counting) = try make()
        let large = content(Self.window + 3, seed: 9)
        try await send(backend, "b.bin", large)
        counting.failRead(at: 0, with: BackendError(.protocolViolation, "the server ignored the requested range", retryable: true))
        let result = try await fetch(backend, "b.bin", into: directory.child("b.part"))
        #expect(result.resumedFrom == 0)
        #expect(try bytes(directory.child("b.part")) == large)
        #expect(counting.counts.withLock { $0.downloads } == 1)
    }

    @Test("the local backend reads only the listed version of a file")
    func localReadsRefuseAChangedFile() async throws {
        let root = directory.child("plain")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try Data(content(1000)).write(to: URL(fileURLWithPath: root + "/f"))
        let local = LocalBackend(root: root)
        let entry = try #require(try await local.stat(try RelativePath("f")))
        #expect(try await local.read(try RelativePath("f"), range: 10..<20, expected: entry, observer: NullTransferObserver())
                == Data(content(1000)[10..<20]))
        var other = entry
        other.size = 999
        let error = await #expect(throws: BackendError.self) {
            _ = try await local.read(try RelativePath("f"), range: 0..<10, expected: other, observer: NullTransferObserver())
        }
        #expect(error?.code == .changedDuringTransfer && error?.isRetryable == true)
    }
}
