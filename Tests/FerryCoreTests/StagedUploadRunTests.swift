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

/// A real LocalBackend that records how the run used staging, checks at each publish that
/// the journal holds none of the batch as in sync yet, and refuses to publish `refused`.
final class WatchedStaging: WrapsLocalBackend, StagedUploadBackend {
    struct Seen {
        var uploads: [String] = []
        var staged: [String] = []
        var batches: [[String]] = []
        var bookedBeforePublish: [String] = []
    }

    let inner: LocalBackend
    let stateFolder: StateFolder
    let refused: String?
    let seen = Mutex(Seen())

    init(root: String, stateFolder: StateFolder, refused: String? = nil) {
        inner = LocalBackend(root: root)
        self.stateFolder = stateFolder
        self.refused = refused
    }


    func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        seen.withLock { $0.uploads.append(request.destination.string) }
        return try await inner.upload(request, observer: observer)
    }

    func stageUpload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> StagedUpload? {
        seen.withLock { $0.staged.append(request.destination.string) }
        return try await inner.stageUpload(request, observer: observer)
    }

    func publishStaged(_ uploads: [StagedUpload]) async throws(BackendError) -> [Result<UploadResult, BackendError>] {
        let paths = uploads.map(\.result.entry.path.string)
        let booked = await inSync(paths)
        seen.withLock {
            $0.batches.append(paths)
            $0.bookedBeforePublish += booked
        }
        let allowed = uploads.filter { $0.result.entry.path.string != refused }
        var published = try await inner.publishStaged(allowed).makeIterator()
        return uploads.map { upload in
            upload.result.entry.path.string == refused
                ? .failure(BackendError(.io, "refused by the test", path: upload.result.entry.path.string))
                : published.next()!
        }
    }

    private func inSync(_ paths: [String]) async -> [String] {
        guard let journal = try? await stateFolder.existingJournal(),
              let pairId = try? await journal.folderPairs().first?.id else { return [] }
        var booked: [String] = []
        for path in paths where (try? await journal.record(pairId: pairId, path: path))?.status == .inSync {
            booked.append(path)
        }
        return booked
    }
}

/// A real LocalBackend that records the uploads each trip stages together, and fails the
/// first staging of `failOnce` as a write cut short would.
final class BatchedStaging: WrapsLocalBackend, StagedUploadBackend {
    let inner: LocalBackend
    let log: BatchedTripLog

    init(root: String, failOnce: String) {
        inner = LocalBackend(root: root)
        log = BatchedTripLog(failOnce: failOnce)
    }

    func stageUpload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> StagedUpload? {
        try await inner.stageUpload(request, observer: observer)
    }

    func stageNow(_ request: UploadRequest, observer: any TransferObserver) throws(BackendError) -> StagedUpload? {
        try inner.stageNow(request, observer: observer)
    }

    func stageNow(_ uploads: [(request: UploadRequest, observer: any TransferObserver)]) -> [Result<StagedUpload?, BackendError>] {
        log.record(uploads.map(\.request.destination.string))
        return uploads.map { upload in
            let path = upload.request.destination.string
            if log.failsNow(path) {
                return .failure(BackendError(.io, "write cut short by the test", path: path))
            }
            return inner.stageNow([upload])[0]
        }
    }

    func publishStaged(_ uploads: [StagedUpload]) async throws(BackendError) -> [Result<UploadResult, BackendError>] {
        try await inner.publishStaged(uploads)
    }
}

/// A real LocalBackend whose first publish waits until the engine holds back: until,
/// besides that batch, as many staged files wait as the engine lets wait while a batch is
/// put in place (`TransferEngine.placementLimit`). It records the most files staged and
/// not yet published at any moment.
final class GatedStaging: WrapsLocalBackend, StagedUploadBackend {
    struct Counts {
        var staged = 0
        var published = 0
        var mostWaiting = 0
        var gateOpenedByCount = false
        var publishes = 0
    }

    let inner: LocalBackend
    let counts = Mutex(Counts())

    init(root: String) {
        inner = LocalBackend(root: root)
    }

    func stageUpload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> StagedUpload? {
        let staged = try await inner.stageUpload(request, observer: observer)
        counted(1)
        return staged
    }

    func stageNow(_ uploads: [(request: UploadRequest, observer: any TransferObserver)]) -> [Result<StagedUpload?, BackendError>] {
        let results = inner.stageNow(uploads)
        counted(uploads.count)
        return results
    }

    private func counted(_ staged: Int) {
        counts.withLock {
            $0.staged += staged
            $0.mostWaiting = max($0.mostWaiting, $0.staged - $0.published)
        }
    }

    func publishStaged(_ uploads: [StagedUpload]) async throws(BackendError) -> [Result<UploadResult, BackendError>] {
        let first = counts.withLock { counts in
            defer { counts.publishes += 1 }
            return counts.publishes == 0
        }
        // The event waited for is the engine filling its allowance.
        if first, await waitForEvent({
            counts.withLock { $0.staged - $0.published - uploads.count >= TransferEngine.placementLimit }
        }) {
            counts.withLock { $0.gateOpenedByCount = true }
        }
        let results = try await inner.publishStaged(uploads)
        counts.withLock { $0.published += uploads.count }
        return results
    }
}

@Suite("small uploads staged and published in batches")
struct StagedUploadRunTests {
    @Test("small files are staged and published before the journal records them; a large one goes on its own")
    func publishedBeforeRecorded() async throws {
        let folder = TemporaryDirectory()
        let source = try SmallFileRun.tree(folder, "src", small: 700)
        let state = folder.child("state")
        let backend = WatchedStaging(root: folder.child("dst"), stateFolder: StateFolder(directory: state))
        let summary = try await SmallFileRun.run(.push, local: source, remote: backend, state: state)
        #expect(summary.uploadedFiles == 701 && summary.failedFiles == 0)
        #expect(try TreeComparison.differences(source, folder.child("dst")) == [])
        let seen = backend.seen.withLock { $0 }
        #expect(seen.uploads == ["VID_1.mov"])
        #expect(seen.staged.count == 700)
        #expect(seen.batches.map(\.count).reduce(0, +) == 700)
        #expect(seen.bookedBeforePublish.isEmpty, "recorded in sync before being under its name: \(seen.bookedBeforePublish)")
    }

    @Test("a file that cannot be published stays queued with its error; the others are in sync")
    func refusedPublishStaysQueued() async throws {
        let folder = TemporaryDirectory()
        let source = try SmallFileRun.tree(folder, "src", small: 20)
        let state = folder.child("state")
        let backend = WatchedStaging(root: folder.child("dst"), stateFolder: StateFolder(directory: state),
                                     refused: "d3/IMG_3.jpg")
        let summary = try await SmallFileRun.run(.push, local: source, remote: backend, state: state)
        #expect(summary.uploadedFiles == 20 && summary.failedFiles == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.child("dst/d3/IMG_3.jpg")))
        let journal = try #require(try await StateFolder(directory: state).existingJournal())
        let pairId = try #require(try await journal.folderPairs().first?.id)
        for record in try await journal.records(pairId: pairId) {
            if record.path == "d3/IMG_3.jpg" {
                #expect(record.status == .needsUpload && record.action == .upload)
                #expect(record.lastError?.contains("refused by the test") == true)
            } else {
                #expect(record.status == .inSync, "\(record.path)")
            }
        }
        // The next run sends it.
        let again = try await SmallFileRun.run(.push, local: source, remote: LocalBackend(root: folder.child("dst")), state: state)
        #expect(again.uploadedFiles == 1 && again.failedFiles == 0)
        #expect(try TreeComparison.differences(source, folder.child("dst")) == [])
    }

    @Test("small uploads to a local disk start in batches, one trip each; a file that fails is retried on its own")
    func uploadsStartInBatches() async throws {
        let folder = TemporaryDirectory()
        let source = try SmallFileRun.tree(folder, "src", small: 60)
        let state = folder.child("state")
        let backend = BatchedStaging(root: folder.child("dst"), failOnce: "d2/IMG_9.jpg")
        var config = Config.defaults
        config.retry = RetryPolicy(attempts: 3, baseDelay: .milliseconds(20))
        let summary = try await SmallFileRun.run(.push, local: source, remote: backend, state: state, config: config)
        #expect(summary.uploadedFiles == 61 && summary.failedFiles == 0)
        #expect(try TreeComparison.differences(source, folder.child("dst")) == [])

        // Every small file went in a batch trip exactly once (the retry went on its own,
        // looking at the remote first); the video, too large to stage, in none.
        let trips = backend.log.trips
        let staged = trips.flatMap { $0 }
        #expect(staged.count == 60 && Set(staged).count == 60)
        #expect(!staged.contains("VID_1.mov"))
        #expect(trips.contains { $0.count > 1 }, "no trip staged more than one file: \(trips.map(\.count))")
        #expect(trips.allSatisfy { $0.count <= TransferEngine.transferBatchSize })

        let journal = try #require(try await StateFolder(directory: state).existingJournal())
        let pairId = try #require(try await journal.folderPairs().first?.id)
        let records = try await journal.records(pairId: pairId)
        #expect(records.count == 61 && records.allSatisfy { $0.status == .inSync })
        #expect(records.first { $0.path == "d2/IMG_9.jpg" }?.attempts == 0)
    }

    @Test("while a batch is put in place, the staged files that wait for their turn stay bounded")
    func waitingStaysBounded() async throws {
        let folder = TemporaryDirectory()
        let files = TransferEngine.placementLimit + TransferEngine.batchLimit + 600
        let source = try SmallFileRun.tree(folder, "src", small: files)
        let backend = GatedStaging(root: folder.child("dst"))
        let summary = try await SmallFileRun.run(.push, local: source, remote: backend, state: folder.child("state"))
        #expect(summary.uploadedFiles == files + 1 && summary.failedFiles == 0)
        #expect(try TreeComparison.differences(source, folder.child("dst")) == [])
        let counts = backend.counts.withLock { $0 }
        #expect(counts.gateOpenedByCount, "the first publish was released by its deadline, not by the engine")
        // What waits, plus the batch being published (one commit's worth, and the batch
        // that crossed it), plus what the running jobs stage before the engine hears of
        // it and the jobs started before it hears that the batch is in place.
        let running = Config.defaults.transfers.maxConcurrent * TransferEngine.transferBatchSize
        let bound = TransferEngine.placementLimit + TransferEngine.batchLimit + TransferEngine.transferBatchSize + 2 * running
        #expect(counts.mostWaiting <= bound, "\(counts.mostWaiting) staged files waited at once")
        #expect(counts.staged == files)
    }
}
