@testable import FerryJournal
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

import FerryConfig
@testable import FerryCore
@testable import FerryEngine
@testable import FerryPlanning

/// A daemon's run for what its watcher saw plans those files alone. A file that settled
/// while a push was ending gets an upload job written to the journal for that push
/// (`NewFileJobs.make`); the push may have stopped taking jobs by then (`JobFeed.push`
/// refuses). Under a loaded suite that made the follow-up run plan the whole tree.
@Suite("runs for what the watcher saw")
struct WatchedChangesRunTests {
    private static let old = Date().timeIntervalSince1970 - 60

    /// A folder pushed once, and a new file whose job was made for a push that had ended.
    private static func refusedJob(for path: String) async throws -> TransferEngineTests.Setup {
        let setup = try TransferEngineTests.Setup(files: ["a.jpg", "b.jpg"])
        #expect(try await setup.run().uploadedFiles == 2)
        try TreeGenerator.write(at: setup.source + "/" + path, size: 300, seed: 5, modified: old)
        let journal = try await StateFolder(directory: setup.state).journal()
        let pairId = try #require(try await journal.folderPairs().first?.id)
        let pair = FolderPair(name: "test", localRoot: setup.source, backend: setup.backend, remoteRoot: .root, mode: .push, ignore: [])
        let made = try await NewFileJobs.make(paths: [path], pair: pair, pairId: pairId, journal: journal,
                                              classifier: try QueueClassifier(rules: setup.config.queues, defaultQueue: "media"),
                                              ignore: try GlobSet([]), cutoff: nil, at: old)
        let ended = JobFeed()
        ended.close()
        #expect(!ended.push(made.jobs))
        return setup
    }

    @Test("a new file whose job came too late for the push before is sent by a run that plans it alone")
    func refusedJobTakenAgain() async throws {
        var setup = try await Self.refusedJob(for: "new.jpg")
        setup.options.watchedChanges = WatchedChanges(settled: ["new.jpg"], removed: [])
        let summary = try await setup.run()
        #expect(summary.uploadedFiles == 1)
        #expect(summary.skippedFiles == 0, "the run planned the whole tree: \(summary)")
        #expect(setup.backend.files["new.jpg"]?.data.count == 300)
        #expect(try await setup.records()["new.jpg"]?.status == .inSync)
    }

    @Test("a new file gone before its refused job began is forgotten by a run that looks at nothing else")
    func refusedJobOfGoneFile() async throws {
        var setup = try await Self.refusedJob(for: "gone.jpg")
        try FileManager.default.removeItem(atPath: setup.source + "/gone.jpg")
        setup.options.watchedChanges = WatchedChanges(settled: [], removed: ["gone.jpg"])
        let summary = try await setup.run()
        #expect(summary.uploadedFiles == 0 && summary.skippedFiles == 0, "\(summary)")
        let records = try await setup.records()
        #expect(records["gone.jpg"] == nil)
        #expect(records.count == 2)
    }

    @Test("a file the journal knows as more than an unstarted upload still needs the whole tree")
    func syncedFileNeedsWholeTree() async throws {
        var setup = try TransferEngineTests.Setup(files: ["a.jpg", "b.jpg"])
        _ = try await setup.run()
        try TreeGenerator.write(at: setup.source + "/a.jpg", size: 900, seed: 8, modified: Self.old)
        setup.options.watchedChanges = WatchedChanges(settled: ["a.jpg"], removed: [])
        let changed = try await setup.run()
        #expect(changed.uploadedFiles == 1 && changed.skippedFiles == 1, "\(changed)")

        try FileManager.default.removeItem(atPath: setup.source + "/b.jpg")
        setup.options.watchedChanges = WatchedChanges(settled: [], removed: ["b.jpg"])
        let removed = try await setup.run()
        #expect(removed.skippedFiles == 1, "a synced file's removal did not plan the whole tree: \(removed)")
    }
}
