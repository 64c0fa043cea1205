@testable import FerryJournal
import FerryPluginAPI
import FerryTestSupport
import Foundation
import LocalBackend
import Synchronization
import Testing

@testable import FerryCore
@testable import FerryEngine

/// A real LocalBackend whose batches leave their names to the next batch's flush
/// (`publishStaged(_:after:)`), watched: at every flush it checks that the journal holds
/// none of the files whose names are not flushed yet as in sync, and it records which names
/// each flush covered. Its first publish waits until files staged after that batch wait
/// too, so a second batch surely follows while the first one's names are unflushed.
final class NamesFlushWatcher: WrapsLocalBackend, StagedUploadBackend {
    struct Seen {
        var staged = 0
        var published = 0
        var named: Set<String> = []
        var flushed: Set<String> = []
        var publishes = 0
        var publishesAfterEarlier = 0
        var flushesAlone = 0
        var bookedUnflushed: [String] = []
        var gateOpenedByCount = false
    }

    /// What the inner backend left to flush, and the files it named.
    struct Names: Sendable {
        var inner: UnflushedNames
        var paths: [String]
    }

    static let waitingBeforeFirstPublish = 64

    let inner: LocalBackend
    let stateFolder: StateFolder
    let seen = Mutex(Seen())

    init(root: String, stateFolder: StateFolder) {
        inner = LocalBackend(root: root)
        self.stateFolder = stateFolder
    }

    func stageUpload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> StagedUpload? {
        let staged = try await inner.stageUpload(request, observer: observer)
        seen.withLock { $0.staged += 1 }
        return staged
    }

    func stageNow(_ uploads: [(request: UploadRequest, observer: any TransferObserver)]) -> [Result<StagedUpload?, BackendError>] {
        let results = inner.stageNow(uploads)
        seen.withLock { $0.staged += uploads.count }
        return results
    }

    func publishStaged(_ uploads: [StagedUpload]) async throws(BackendError) -> [Result<UploadResult, BackendError>] {
        Issue.record("the engine published a batch durably instead of leaving its names to the next flush")
        return try await inner.publishStaged(uploads)
    }

    func publishStaged(_ uploads: [StagedUpload], after earlier: UnflushedNames?) async throws(BackendError)
        -> (results: [Result<UploadResult, BackendError>], names: UnflushedNames) {
        let first = seen.withLock { seen in
            defer { seen.publishes += 1 }
            return seen.publishes == 0
        }
        // The event waited for is the engine staging more files behind this batch.
        if first, await waitForEvent({ seen.withLock { $0.staged - uploads.count >= Self.waitingBeforeFirstPublish } }) {
            seen.withLock { $0.gateOpenedByCount = true }
        }
        await checkNothingUnflushedIsBooked()
        let earlierNames = earlier?.pending as? Names
        let (results, names) = try await inner.publishStaged(uploads, after: earlierNames?.inner)
        let named = zip(uploads, results).compactMap { upload, result in
            (try? result.get()).map { _ in upload.result.entry.path.string }
        }
        seen.withLock { seen in
            seen.published += uploads.count
            if let earlierNames {
                seen.publishesAfterEarlier += 1
                seen.flushed.formUnion(earlierNames.paths)
            }
            seen.named.formUnion(named)
        }
        return (results, UnflushedNames(Names(inner: names, paths: named)))
    }

    func flushNames(_ names: UnflushedNames) async throws(BackendError) {
        await checkNothingUnflushedIsBooked()
        guard let names = names.pending as? Names else {
            Issue.record("names to flush that this backend did not leave")
            return
        }
        try await inner.flushNames(names.inner)
        seen.withLock { seen in
            seen.flushesAlone += 1
            seen.flushed.formUnion(names.paths)
        }
    }

    /// Records any file named but not flushed that the journal already holds as in sync.
    private func checkNothingUnflushedIsBooked() async {
        let unflushed = seen.withLock { $0.named.subtracting($0.flushed) }
        guard !unflushed.isEmpty, let journal = try? await stateFolder.existingJournal(),
              let pairId = try? await journal.folderPairs().first?.id else { return }
        for path in unflushed.sorted() where (try? await journal.record(pairId: pairId, path: path))?.status == .inSync {
            seen.withLock { $0.bookedUnflushed.append(path) }
        }
    }
}

@Suite("a batch's names flushed by the next batch's flush")
struct NamesFlushRunTests {
    @Test("no file is recorded in sync before its name is flushed; the next batch's flush covers the names, the last ones are flushed alone")
    func bookedOnlyOnceFlushed() async throws {
        let folder = TemporaryDirectory()
        let files = TransferEngine.batchLimit + NamesFlushWatcher.waitingBeforeFirstPublish + 300
        let source = try SmallFileRun.tree(folder, "src", small: files)
        let state = folder.child("state")
        let backend = NamesFlushWatcher(root: folder.child("dst"), stateFolder: StateFolder(directory: state))
        let summary = try await SmallFileRun.run(.push, local: source, remote: backend, state: state)
        #expect(summary.uploadedFiles == files + 1 && summary.failedFiles == 0)
        #expect(try TreeComparison.differences(source, folder.child("dst")) == [])

        let seen = backend.seen.withLock { $0 }
        #expect(seen.gateOpenedByCount, "the first publish was released by its deadline, not by the engine")
        #expect(seen.bookedUnflushed.isEmpty, "recorded in sync before its name was flushed: \(seen.bookedUnflushed)")
        #expect(seen.published == files && seen.named.count == files)
        #expect(seen.flushed == seen.named, "\(seen.named.subtracting(seen.flushed).count) names never flushed")
        #expect(seen.publishesAfterEarlier >= 1, "no batch's flush covered the names of the batch before")
        #expect(seen.flushesAlone >= 1, "the last batch's names were not flushed at the end of the run")

        let journal = try #require(try await StateFolder(directory: state).existingJournal())
        let pairId = try #require(try await journal.folderPairs().first?.id)
        let records = try await journal.records(pairId: pairId)
        #expect(records.count == files + 1 && records.allSatisfy { $0.status == .inSync })
    }
}
