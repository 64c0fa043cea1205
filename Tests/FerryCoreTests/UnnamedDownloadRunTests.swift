@testable import FerryJournal
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import LocalBackend
import Synchronization
import Testing

@testable import FerryCore
@testable import FerryEngine
@testable import FerryPlanning

/// A real LocalBackend as a pull's remote that notes, for each small download, whether its
/// partial file came open and unnamed or under a partial name, and can write a file of the
/// user's at a path's local name right after that path is fetched, while it waits to be
/// put in place.
final class UnnamedDownloads: WrapsLocalBackend, DirectDownloadBackend {
    struct Fetch {
        var path: String
        var unnamed: Bool
        var partialNamed: Bool
    }

    let inner: LocalBackend
    let localRoot: String
    let meddleAt: String?
    let fetches = Mutex<[Fetch]>([])

    init(root: String, localRoot: String, meddleAt: String? = nil) {
        inner = LocalBackend(root: root)
        self.localRoot = localRoot
        self.meddleAt = meddleAt
    }

    func downloadNow(_ downloads: [(request: DownloadRequest, observer: any TransferObserver)]) -> [Result<DownloadResult, BackendError>] {
        downloads.map { download in
            let request = download.request
            let path = request.source.string
            fetches.withLock {
                $0.append(Fetch(path: path, unnamed: request.openPartial is OpenFile,
                                partialNamed: FileManager.default.fileExists(atPath: request.partialFile)))
            }
            let result = inner.downloadNow([download])[0]
            if path == meddleAt {
                try? Data("the user's own".utf8).write(to: URL(fileURLWithPath: localRoot + "/" + path))
            }
            return result
        }
    }

    func fetch(of path: String) -> Fetch? {
        fetches.withLock { $0.last { $0.path == path } }
    }
}

@Suite("small downloads to new names are written with no name and named once in place")
struct UnnamedDownloadRunTests {
    @Test("new names get unnamed partial files; a name the user takes meanwhile keeps the user's file; a replacement goes under a partial name")
    func unnamedUntilPlaced() async throws {
        let folder = TemporaryDirectory()
        let (remote, local, state) = try SmallFileRun.pullFolders(folder, small: 40)
        let backend = UnnamedDownloads(root: remote, localRoot: local, meddleAt: "d3/IMG_3.jpg")
        let summary = try await SmallFileRun.run(.pull, local: local, remote: backend, state: state)

        // Every small file came open and unnamed: no partial name was ever made for one.
        let fetches = backend.fetches.withLock { $0 }
        #expect(Set(fetches.map(\.path)).count == 40)
        #expect(fetches.allSatisfy { $0.unnamed && !$0.partialNamed }, "\(fetches.filter { !$0.unnamed || $0.partialNamed }.map(\.path))")
        #expect(summary.downloadedFiles == 40 && summary.failedFiles == 1)
        #expect(summary.failures.first?.message.contains("changed") == true)
        #expect(try String(contentsOfFile: local + "/d3/IMG_3.jpg", encoding: .utf8) == "the user's own")
        #expect(try TreeComparison.differences(remote, local) == ["size differs: d3/IMG_3.jpg (4096 vs 14)"])
        #expect(StagedDownloadRunTests.temporaryNames(under: local) == [])
        let journal = try #require(try await StateFolder(directory: state).existingJournal())
        let pairId = try #require(try await journal.folderPairs().first?.id)
        for record in try await journal.records(pairId: pairId) where record.path != "d3/IMG_3.jpg" {
            #expect(record.status == .inSync, "\(record.path)")
        }

        // A newer remote version of a file in sync replaces it: under a partial name,
        // renamed over the old one.
        try TreeGenerator.write(at: remote + "/d1/IMG_1.jpg", size: 5000, seed: 1234)
        let replacing = UnnamedDownloads(root: remote, localRoot: local)
        let again = try await SmallFileRun.run(.pull, local: local, remote: replacing, state: state)
        let replaced = try #require(replacing.fetch(of: "d1/IMG_1.jpg"))
        #expect(!replaced.unnamed && replaced.partialNamed)
        #expect(again.failures.allSatisfy { $0.path.hasSuffix("d3/IMG_3.jpg") }, "\(again.failures.map(\.message))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: local + "/d1/IMG_1.jpg"))
            == Data(contentsOf: URL(fileURLWithPath: remote + "/d1/IMG_1.jpg")))
        #expect(StagedDownloadRunTests.temporaryNames(under: local) == [])
    }
}
