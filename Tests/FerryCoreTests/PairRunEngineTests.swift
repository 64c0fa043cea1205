@testable import FerryJournal
import FerryPluginAPI
import FerryTestSupport
import Foundation
import LocalBackend
import Synchronization
import Testing

import FerryConfig
@testable import FerryCore
@testable import FerryEngine
@testable import FerryPlanning

/// A real LocalBackend whose first uploads of each file go wrong on purpose: they fail
/// with `error`, or (`landsAnyway`) they arrive but their answer is lost, the caller
/// hearing `error` although the file is in place.
final class FailingUploads: WrapsLocalBackend {
    let inner: LocalBackend
    let failuresPerFile: Int
    let error: BackendError
    let landsAnyway: Bool
    let attempts = Mutex<[String: Int]>([:])

    init(root: String, failuresPerFile: Int, error: BackendError, landsAnyway: Bool = false) {
        inner = LocalBackend(root: root)
        self.failuresPerFile = failuresPerFile
        self.error = error
        self.landsAnyway = landsAnyway
    }


    func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        let attempt = attempts.withLock { counts -> Int in
            counts[request.destination.string, default: 0] += 1
            return counts[request.destination.string]!
        }
        guard attempt <= failuresPerFile else { return try await inner.upload(request, observer: observer) }
        if landsAnyway { _ = try await inner.upload(request, observer: observer) }
        throw error
    }
}

/// Collects events for assertions.
final class RecordingSink: RunEventSink {
    let events = Mutex<[RunEvent]>([])
    func emit(_ event: RunEvent) { events.withLock { $0.append(event) } }

    var retries: Int {
        events.withLock { $0.count { if case .failed(_, _, _, true, _) = $0 { return true } else { return false } } }
    }
}

@Suite("the run engine against a real folder")
struct PairRunEngineTests {
    static func config(attempts: Int) -> Config {
        var config = Config.defaults
        config.retry = RetryPolicy(attempts: attempts, baseDelay: .milliseconds(5), factor: 2, maxDelay: .milliseconds(20))
        return config
    }

    func makeSource(_ folder: TemporaryDirectory, files: Int) throws -> String {
        let source = folder.child("src")
        for index in 0..<files {
            try TreeGenerator.write(at: source + "/IMG_\(index).jpg", size: 1000 + index, seed: UInt64(index))
        }
        return source
    }

    func run(_ backend: any Backend, source: String, state: String, config: Config, sink: any RunEventSink = DiscardingEventSink()) async throws -> RunSummary {
        let pair = FolderPair(name: "test", localRoot: source, backend: backend, remoteRoot: .root, mode: .push, ignore: [])
        return try await PairRun(pair: pair, config: config, state: StateFolder(directory: state), options: RunOptions(),
                                 sink: sink, progress: RunProgress()).run()
    }

    func records(_ state: String) async throws -> [FileRecord] {
        let journal = try #require(try await StateFolder(directory: state).existingJournal())
        let pair = try #require(try await journal.folderPairs().first)
        return try await journal.records(pairId: try #require(pair.id))
    }

    @Test("retryable failures are retried with backoff until they succeed")
    func retriesThenSucceeds() async throws {
        let folder = TemporaryDirectory()
        let source = try makeSource(folder, files: 5)
        let backend = FailingUploads(root: folder.child("dst"), failuresPerFile: 2,
                                     error: BackendError(.serverError, "503 Service Unavailable"))
        let sink = RecordingSink()
        let summary = try await run(backend, source: source, state: folder.child("state"), config: Self.config(attempts: 5), sink: sink)
        #expect(summary.uploadedFiles == 5)
        #expect(summary.failedFiles == 0)
        #expect(sink.retries == 10)
        #expect(try TreeComparison.differences(source, folder.child("dst")) == [])
        for record in try await records(folder.child("state")) {
            #expect(record.status == .inSync)
            #expect(record.attempts == 0)
            #expect(record.lastError == nil)
        }
    }

    @Test("an upload whose answer was lost is recognised on the target and not sent again")
    func lostReplyIsNotResent() async throws {
        let folder = TemporaryDirectory()
        let source = try makeSource(folder, files: 6)
        let backend = FailingUploads(root: folder.child("dst"), failuresPerFile: 1,
                                     error: BackendError(.connectionLost, "the connection was lost"), landsAnyway: true)
        let sink = RecordingSink()
        let summary = try await run(backend, source: source, state: folder.child("state"), config: Self.config(attempts: 5), sink: sink)
        #expect(summary.uploadedFiles == 6)
        #expect(summary.failedFiles == 0)
        #expect(summary.uploadedBytes == 0, "the retries send nothing: each file is found complete on the target")
        #expect(sink.retries == 6)
        #expect(backend.attempts.withLock { $0.values.sorted() } == Array(repeating: 1, count: 6))
        #expect(try TreeComparison.differences(source, folder.child("dst")) == [])
        for record in try await records(folder.child("state")) {
            #expect(record.status == .inSync)
        }
    }

    @Test("a permanent failure marks the file syncError at once and the rest goes on")
    func permanentFailure() async throws {
        let folder = TemporaryDirectory()
        let source = try makeSource(folder, files: 3)
        let backend = FailingUploads(root: folder.child("dst"), failuresPerFile: 1,
                                     error: BackendError(.permissionDenied, "permission denied"))
        let sink = RecordingSink()
        let summary = try await run(backend, source: source, state: folder.child("state"), config: Self.config(attempts: 5), sink: sink)
        #expect(summary.failedFiles == 3)
        #expect(sink.retries == 0)
        for record in try await records(folder.child("state")) {
            #expect(record.status == .syncError)
            #expect(record.attempts == 1)
            #expect(record.lastError?.contains("permission denied") == true)
        }
        // The next run tries again (a person asked again) and succeeds now.
        let again = try await run(backend, source: source, state: folder.child("state"), config: Self.config(attempts: 5))
        #expect(again.uploadedFiles == 3)
    }

    @Test("retries stop after the configured number of attempts in each of the configured passes")
    func retriesExhausted() async throws {
        let folder = TemporaryDirectory()
        let source = try makeSource(folder, files: 2)
        let backend = FailingUploads(root: folder.child("dst"), failuresPerFile: 100,
                                     error: BackendError(.timeout, "timed out"))
        let sink = RecordingSink()
        var config = Self.config(attempts: 3)
        config.retry.passes = 2
        let summary = try await run(backend, source: source, state: folder.child("state"), config: config, sink: sink)
        #expect(summary.failedFiles == 2)
        #expect(sink.retries == 10)
        #expect(backend.attempts.withLock { $0.values.sorted() } == [6, 6])
        for record in try await records(folder.child("state")) {
            #expect(record.status == .syncError)
            #expect(record.attempts == 6)
        }
    }

    @Test("a rescan of an unchanged tree writes no file row, only the scan confirmation")
    func unchangedRescanWritesNothing() async throws {
        let folder = TemporaryDirectory()
        let source = try makeSource(folder, files: 30)
        let backend = LocalBackend(root: folder.child("dst"))
        _ = try await run(backend, source: source, state: folder.child("state"), config: .defaults)
        let before = try await records(folder.child("state"))
        let journal = try #require(try await StateFolder(directory: folder.child("state")).existingJournal())
        let scannedBefore = try #require(try await journal.folderPairs().first?.lastScanAt)
        let summary = try await run(backend, source: source, state: folder.child("state"), config: .defaults)
        #expect(summary.uploadedFiles == 0)
        #expect(summary.skippedFiles == 30)
        #expect(try await records(folder.child("state")) == before)
        let scannedAfter = try #require(try await journal.folderPairs().first?.lastScanAt)
        #expect(scannedAfter >= scannedBefore)
    }

    @Test("a second run of the same pair is refused while the first holds the lock")
    func lockIsExclusive() throws {
        let folder = TemporaryDirectory()
        let held = try RunLock.acquire(stateDirectory: folder.path, pairId: 7)
        #expect(throws: RunLockError.self) { _ = try RunLock.acquire(stateDirectory: folder.path, pairId: 7) }
        do {
            _ = try RunLock.acquire(stateDirectory: folder.path, pairId: 7)
        } catch {
            #expect(error.message.contains("pid \(getpid())"))
        }
        _ = try RunLock.acquire(stateDirectory: folder.path, pairId: 8)
        withExtendedLifetime(held) {}
    }
}

@Suite("scanner on a real folder")
struct LocalScannerTests {
    func scan(_ root: String, follow: Bool, ignore: [String] = []) async throws -> ScanResult {
        try await LocalScanner(root: root, ignore: try GlobSet(ScanSettings.builtInIgnores + ignore), followSymlinks: follow).scan()
    }

    @Test("files are found with size, mtime and inode; ignored and temporary names are skipped")
    func findsFiles() async throws {
        let folder = TemporaryDirectory()
        try TreeGenerator.write(at: folder.child("a/IMG_1.jpg"), size: 10, seed: 1, modified: 1_700_000_000.123456789)
        try TreeGenerator.write(at: folder.child("a/.IMG_2.jpg.ferry-part"), size: 10, seed: 2)
        try TreeGenerator.write(at: folder.child("b/file.tmp"), size: 10, seed: 3)
        try TreeGenerator.write(at: folder.child("cache/x.jpg"), size: 10, seed: 4)
        try TreeGenerator.write(at: folder.child(".DS_Store"), size: 10, seed: 5)
        let result = try await scan(folder.path, follow: false, ignore: ["cache/**"])
        #expect(result.entries.map(\.path.string) == ["a/IMG_1.jpg"])
        let entry = try #require(result.entries.first)
        #expect(entry.version.size == 10)
        #expect(entry.version.modifiedNanos / 1000 == 1_700_000_000_123_456)
        #expect(entry.version.inode != 0)
    }

    @Test("symbolic links are skipped with a note, followed inside the folder when asked, never outside")
    func symbolicLinks() async throws {
        let folder = TemporaryDirectory()
        let outside = TemporaryDirectory()
        try TreeGenerator.write(at: folder.child("real/IMG_1.jpg"), size: 10, seed: 1)
        try TreeGenerator.write(at: outside.child("secret.jpg"), size: 10, seed: 2)
        try FileManager.default.createSymbolicLink(atPath: folder.child("inside-link"), withDestinationPath: folder.child("real"))
        try FileManager.default.createSymbolicLink(atPath: folder.child("outside-link"), withDestinationPath: outside.path)
        try FileManager.default.createSymbolicLink(atPath: folder.child("loop"), withDestinationPath: folder.path)

        let skipped = try await scan(folder.path, follow: false)
        #expect(skipped.entries.map(\.path.string) == ["real/IMG_1.jpg"])
        #expect(Set(skipped.notes.map(\.path)) == ["inside-link", "outside-link", "loop"])
        #expect(skipped.notes.allSatisfy { $0.reason == .symbolicLink })

        let followed = try await scan(folder.path, follow: true)
        #expect(Set(followed.entries.map(\.path.string)) == ["real/IMG_1.jpg", "inside-link/IMG_1.jpg"])
        #expect(followed.notes.contains { $0.path == "outside-link" && $0.reason == .linkOutsideFolder })
        #expect(!followed.entries.contains { $0.path.string.contains("secret") })
    }

    @Test("a missing root is an error that says so")
    func missingRoot() async throws {
        let folder = TemporaryDirectory()
        await #expect(throws: BackendError.self) { _ = try await scan(folder.child("nope"), follow: false) }
    }
}
