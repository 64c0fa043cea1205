@testable import FerryJournal
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import LocalBackend
import Synchronization
import Testing

import FerryConfig
@testable import FerryCore
@testable import FerryEngine
@testable import FerryPlanning

/// A real LocalBackend as a pull's remote, which records whether each download was asked
/// to flush, checks at every download that no row the journal holds in sync lacks its
/// local file, and can write a local file at a path while that path downloads (a user
/// saving a file there meanwhile).
final class WatchedDownloads: WrapsLocalBackend {
    struct Seen {
        var flushed: [String] = []
        var unflushed: [String] = []
        /// Rows in sync whose local file was missing or of another size.
        var bookedBeforePlaced: [String] = []
    }

    let inner: LocalBackend
    let localRoot: String
    let stateFolder: StateFolder
    let meddleAt: String?
    let seen = Mutex(Seen())

    init(root: String, localRoot: String, stateFolder: StateFolder, meddleAt: String? = nil) {
        inner = LocalBackend(root: root)
        self.localRoot = localRoot
        self.stateFolder = stateFolder
        self.meddleAt = meddleAt
    }

    func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        let path = request.source.string
        let unplaced = await inSyncButNotPlaced()
        seen.withLock {
            if request.flush { $0.flushed.append(path) } else { $0.unflushed.append(path) }
            $0.bookedBeforePlaced += unplaced
        }
        let result = try await inner.download(request, observer: observer)
        if path == meddleAt {
            try? Data("the user's own".utf8).write(to: URL(fileURLWithPath: localRoot + "/" + path))
        }
        return result
    }

    private func inSyncButNotPlaced() async -> [String] {
        guard let journal = try? await stateFolder.existingJournal(),
              let pairId = try? await journal.folderPairs().first?.id,
              let rows = try? await journal.records(pairId: pairId, status: .inSync) else { return [] }
        return rows.filter { row in
            let size = (try? FileManager.default.attributesOfItem(atPath: localRoot + "/" + row.path)[.size] as? Int).flatMap { $0 }
            return size.map { Int64($0) != row.local?.size } ?? true
        }.map(\.path)
    }
}

/// A real LocalBackend that records the downloads each trip fetches together, and fails
/// the first fetch of `failOnce` as a read cut short would.
final class BatchedDownloads: WrapsLocalBackend, DirectDownloadBackend {
    let inner: LocalBackend
    let log: BatchedTripLog

    init(root: String, failOnce: String) {
        inner = LocalBackend(root: root)
        log = BatchedTripLog(failOnce: failOnce)
    }

    func downloadNow(_ downloads: [(request: DownloadRequest, observer: any TransferObserver)]) -> [Result<DownloadResult, BackendError>] {
        log.record(downloads.map(\.request.source.string))
        return downloads.map { download in
            let path = download.request.source.string
            if log.failsNow(path) {
                return .failure(BackendError(.io, "read cut short by the test", path: path))
            }
            return inner.downloadNow([download])[0]
        }
    }
}

@Suite("small downloads flushed in batches before they are put in place")
struct StagedDownloadRunTests {
    /// Names under `folder` that only a transfer in progress uses.
    static func temporaryNames(under folder: String) -> [String] {
        let names = FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? []
        return names.filter { TemporaryName.isTemporary(($0 as NSString).lastPathComponent) }
    }

    @Test("small files are flushed with their batch and recorded only once in place; a large one is flushed on its own")
    func placedBeforeRecorded() async throws {
        let folder = TemporaryDirectory()
        let (remote, local, state) = try SmallFileRun.pullFolders(folder, small: 300)
        let backend = WatchedDownloads(root: remote, localRoot: local, stateFolder: StateFolder(directory: state))
        let summary = try await SmallFileRun.run(.pull, local: local, remote: backend, state: state)
        #expect(summary.downloadedFiles == 301 && summary.failedFiles == 0)
        #expect(try TreeComparison.differences(remote, local) == [])
        let seen = backend.seen.withLock { $0 }
        #expect(seen.flushed == ["VID_1.mov"])
        #expect(seen.unflushed.count == 300)
        #expect(seen.bookedBeforePlaced.isEmpty, "recorded in sync before being under its name: \(seen.bookedBeforePlaced)")
        #expect(Self.temporaryNames(under: local) == [])
        let again = try await SmallFileRun.run(.pull, local: local, remote: LocalBackend(root: remote), state: state)
        #expect(again.downloadedFiles == 0 && again.failedFiles == 0)
    }

    @Test("a local file written while its download waits to be placed is kept; the download stays queued")
    func localChangeKept() async throws {
        let folder = TemporaryDirectory()
        let remote = try SmallFileRun.tree(folder, "remote", small: 20)
        let local = folder.child("local")
        for index in 0..<7 { try FileManager.default.createDirectory(atPath: local + "/d\(index)", withIntermediateDirectories: true) }
        let state = folder.child("state")
        let backend = WatchedDownloads(root: remote, localRoot: local, stateFolder: StateFolder(directory: state),
                                       meddleAt: "d3/IMG_3.jpg")
        let summary = try await SmallFileRun.run(.pull, local: local, remote: backend, state: state)
        #expect(summary.downloadedFiles == 20 && summary.failedFiles == 1)
        #expect(summary.failures.first?.message.contains("changed") == true)
        #expect(try String(contentsOfFile: local + "/d3/IMG_3.jpg", encoding: .utf8) == "the user's own")
        #expect(Self.temporaryNames(under: local) == [])
        let journal = try #require(try await StateFolder(directory: state).existingJournal())
        let pairId = try #require(try await journal.folderPairs().first?.id)
        for record in try await journal.records(pairId: pairId) where record.path != "d3/IMG_3.jpg" {
            #expect(record.status == .inSync, "\(record.path)")
        }
        let kept = try #require(try await journal.record(pairId: pairId, path: "d3/IMG_3.jpg"))
        #expect(kept.status != .inSync)
    }

    @Test("small downloads from a local disk start in batches, one trip each; a file that fails is fetched again")
    func downloadsStartInBatches() async throws {
        let folder = TemporaryDirectory()
        let (remote, local, state) = try SmallFileRun.pullFolders(folder, small: 60)
        let backend = BatchedDownloads(root: remote, failOnce: "d2/IMG_9.jpg")
        var config = Config.defaults
        config.retry = RetryPolicy(attempts: 3, baseDelay: .milliseconds(20))
        let summary = try await SmallFileRun.run(.pull, local: local, remote: backend, state: state, config: config)
        #expect(summary.downloadedFiles == 61 && summary.failedFiles == 0)
        #expect(try TreeComparison.differences(remote, local) == [])
        #expect(Self.temporaryNames(under: local) == [])

        // Every small file went in a batch trip, the one that failed twice; the video, too
        // large for a batch, in none.
        let trips = backend.log.trips
        let fetched = trips.flatMap { $0 }
        #expect(fetched.count == 61 && Set(fetched).count == 60)
        #expect(fetched.filter { $0 == "d2/IMG_9.jpg" }.count == 2)
        #expect(!fetched.contains("VID_1.mov"))
        #expect(trips.contains { $0.count > 1 }, "no trip fetched more than one file: \(trips.map(\.count))")
        #expect(trips.allSatisfy { $0.count <= TransferEngine.transferBatchSize })

        let journal = try #require(try await StateFolder(directory: state).existingJournal())
        let pairId = try #require(try await journal.folderPairs().first?.id)
        let records = try await journal.records(pairId: pairId)
        #expect(records.count == 61 && records.allSatisfy { $0.status == .inSync })
    }
}
