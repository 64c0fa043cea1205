import FerryPluginAPI
import FerryTestSupport
import Foundation
import LocalBackend
import Logging
import Synchronization
import Testing

@testable import FerryCore

/// Counts the summaries of the runs it sees.
final class SummaryCounter: RunEventSink {
    let summaries = Mutex<[RunSummary]>([])

    func emit(_ event: RunEvent) {
        if case let .summary(summary) = event { summaries.withLock { $0.append(summary) } }
    }
}

/// `PairRunner` over a real local folder pair and a real journal.
@Suite("PairRunner", .integration)
struct PairRunnerTests {
    struct Setup {
        let folder = TemporaryDirectory("pairrunner")
        let counter = SummaryCounter()
        let runner: PairRunner

        /// Files were modified two hours ago; the quiet period is an hour, so "fresh" stays
        /// fresh however slowly a loaded machine runs the test.
        init(files: [String], modifiedAgo: Double = 7200) throws {
            for (index, path) in files.enumerated() {
                try TreeGenerator.write(at: folder.child("src/" + path), size: 1000 + index, seed: UInt64(index),
                                        modified: Date().timeIntervalSince1970 - modifiedAgo)
            }
            try FileManager.default.createDirectory(atPath: folder.child("src"), withIntermediateDirectories: true)
            let pair = FolderPair(name: "test", localRoot: folder.child("src"), backend: LocalBackend(root: folder.child("dst")),
                                  remoteRoot: .root, mode: .push, ignore: [])
            var config = Config.defaults
            config.watch.quietPeriod = .seconds(3600)
            let state = folder.child("state")
            runner = PairRunner(pair: pair, config: config, stateDirectory: state, options: RunOptions(), sink: counter,
                                board: DaemonStatusBoard(stateDirectory: state, command: "test"),
                                bandwidth: BandwidthSwitcher(settings: BandwidthSettings()), logger: Logger(label: "test"))
        }

        /// Asks for a run and waits for its summary.
        func run(_ request: RunRequest) async -> RunSummary? {
            await withCheckedContinuation { continuation in
                Task { await runner.request(request) { continuation.resume(returning: $0) } }
            }
        }

        func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: folder.child("dst/" + path)) }
    }

    @Test("requests that arrive while a run is under way are merged: four requests, at most two runs")
    func requestsAreMerged() async throws {
        let setup = try Setup(files: (0..<200).map { "IMG_\($0).jpg" })
        let results = await withTaskGroup(of: RunSummary?.self) { group in
            for reason in ["watch", "rescan", "schedule", "poll"] {
                group.addTask { await setup.run(RunRequest(reason: reason)) }
            }
            var results: [RunSummary?] = []
            for await result in group { results.append(result) }
            return results
        }
        #expect(results.count == 4 && results.allSatisfy { $0 != nil })
        let runs = setup.counter.summaries.withLock { $0 }
        #expect((1...2).contains(runs.count))
        #expect(runs.reduce(0) { $0 + $1.uploadedFiles } == 200)
    }

    @Test("a run restricted to some queues sends only their files; the rest stays queued")
    func queueRestriction() async throws {
        let setup = try Setup(files: ["a.jpg", "track.gpx", "bundle.zip"])
        let summary = try #require(await setup.run(RunRequest(reason: "schedule", queues: ["archives"])))
        #expect(summary.uploadedFiles == 1)
        #expect(setup.exists("bundle.zip") && !setup.exists("a.jpg") && !setup.exists("track.gpx"))
        let journal = try #require(try Journal.openForReading(at: StateLocation.journalPath(in: setup.folder.child("state"))))
        let pending = try await journal.records(pairId: 1, status: .needsUpload).map(\.path).sorted()
        #expect(pending == ["a.jpg", "track.gpx"])
        let rest = try #require(await setup.run(RunRequest(reason: "watch")))
        #expect(rest.uploadedFiles == 2)
    }

    @Test("files still being written are left out of a run: those the watcher saw, and those modified within the quiet period")
    func unsettledFilesWait() async throws {
        let setup = try Setup(files: ["old.jpg", "writing.mov"])
        try TreeGenerator.write(at: setup.folder.child("src/fresh.jpg"), size: 500, seed: 9)
        await setup.runner.setUnsettled(["writing.mov"])
        let summary = try #require(await setup.run(RunRequest(reason: "watch")))
        #expect(summary.uploadedFiles == 1)
        #expect(setup.exists("old.jpg") && !setup.exists("writing.mov") && !setup.exists("fresh.jpg"))
        #expect(Set(summary.heldBack) == ["writing.mov", "fresh.jpg"])
    }
}
