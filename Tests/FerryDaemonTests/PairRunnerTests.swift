@testable import FerryJournal
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import LocalBackend
import Logging
import Synchronization
import Testing

import FerryConfig
@testable import FerryCore
@testable import FerryEngine
import FerryDaemon

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
    final class Setup: Sendable {
        let folder = TemporaryDirectory("pairrunner")
        let counter = SummaryCounter()
        let runner: PairRunner
        /// The runner's `run()`, as the runtime's task group runs it, for the test's length.
        private let hosting: Task<Void, Never>

        /// Files were modified two hours ago; the quiet period is an hour, so "fresh" stays
        /// fresh however slowly a loaded machine runs the test. With a `clock`, the runner's
        /// waits and its wall clock move with it: an hour passes as soon as a task waits it.
        init(files: [String], modifiedAgo: Double = 7200, backend: (any Backend)? = nil, clock: InstantClock? = nil) throws {
            for (index, path) in files.enumerated() {
                try TreeGenerator.write(at: folder.child("src/" + path), size: 1000 + index, seed: UInt64(index),
                                        modified: Date().timeIntervalSince1970 - modifiedAgo)
            }
            try FileManager.default.createDirectory(atPath: folder.child("src"), withIntermediateDirectories: true)
            let pair = FolderPair(name: "test", localRoot: folder.child("src"),
                                  backend: backend ?? LocalBackend(root: folder.child("dst")), remoteRoot: .root, mode: .push, ignore: [])
            var config = Config.defaults
            config.watch.quietPeriod = .seconds(3600)
            let state = folder.child("state")
            var options = RunOptions()
            let clock: any FerryClock = clock ?? SystemClock()
            options.clock = clock
            runner = PairRunner(pair: pair, config: config, state: StateFolder(directory: state), options: options, sink: counter,
                                board: DaemonStatusBoard(stateFolder: StateFolder(directory: state), command: "test", clock: clock),
                                bandwidth: BandwidthSwitcher(settings: BandwidthSettings(), clock: clock), logger: Logger(label: "test"))
            let runner = self.runner
            hosting = Task { await runner.run() }
        }

        deinit { hosting.cancel() }

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
        let journal = try #require(try await StateFolder(directory: setup.folder.child("state")).existingJournal())
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

    @Test("a folder rewritten with encrypted-looking bytes is held although the watcher has seen only one file settle")
    func partlySettledRewriteIsHeld() async throws {
        let setup = try Setup(files: [])
        let names = (0..<60).map { "IMG_\($0).jpg" }
        let past = Date().timeIntervalSince1970 - 7200
        func write(_ name: String, _ bytes: [UInt8]) throws {
            let path = setup.folder.child("src/" + name)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: past)], ofItemAtPath: path)
        }
        var generator = SystemRandomNumberGenerator()
        func random(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        for name in names { try write(name, [0xff, 0xd8, 0xff, 0xe1] + random(6_000)) }
        let first = try #require(await setup.run(RunRequest(reason: "start")))
        #expect(first.uploadedFiles == names.count)
        let sent = try Data(contentsOf: URL(fileURLWithPath: setup.folder.child("dst/IMG_59.jpg")))

        // Every photo is rewritten with random bytes; the watcher has seen one settle, the
        // rest are still being written (on a loaded machine it reads its events late).
        for name in names { try write(name, random(6_100)) }
        await setup.runner.setUnsettled(Set(names.filter { $0 != "IMG_59.jpg" }))
        #expect(await setup.run(RunRequest(reason: "watch")) == nil, "a run of one replacement went through")
        #expect(try Data(contentsOf: URL(fileURLWithPath: setup.folder.child("dst/IMG_59.jpg"))) == sent)
    }

    @Test("a file whose modification time is far ahead of the clock (a camera in the wrong zone) is sent, not held back until the clock gets there")
    func futureTimeIsSettled() async throws {
        let setup = try Setup(files: ["IMG_1.jpg", "IMG_2.jpg"])
        // A day ahead, and ten minutes ahead: the quiet period is an hour, so only the
        // second may be a write in progress (a clock stepped back a little).
        let now = Date().timeIntervalSince1970
        try TreeGenerator.write(at: setup.folder.child("src/IMG_1.jpg"), size: 1000, seed: 1, modified: now + 86_400)
        try TreeGenerator.write(at: setup.folder.child("src/IMG_2.jpg"), size: 1001, seed: 2, modified: now + 600)
        let summary = try #require(await setup.run(RunRequest(reason: "watch")))
        #expect(summary.uploadedFiles == 1)
        #expect(setup.exists("IMG_1.jpg") && !setup.exists("IMG_2.jpg"))
        #expect(summary.heldBack == ["IMG_2.jpg"])
    }

    @Test("a file too fresh when a push starts joins that push once it has settled, instead of waiting for it to end")
    func freshAtStartJoinsRunningPush() async throws {
        let backend = InMemoryBackend()
        backend.hold("big.mov")
        let clock = InstantClock()
        let setup = try Setup(files: ["big.mov"], backend: backend, clock: clock)
        // Written now: within the hour's quiet period when the run starts, whenever it starts.
        try TreeGenerator.write(at: setup.folder.child("src/IMG_1.jpg"), size: 500, seed: 9)
        let run = Task { await setup.run(RunRequest(reason: "start")) }
        defer { run.cancel() }
        try #require(await waitForEvent { backend.isWaitingAtGate("big.mov") }, "big.mov never reached the backend")
        // The run's plan left the photo out; the hour's wait passes on the test clock, and
        // the photo goes while the video is still held.
        try #require(await waitForEvent { backend.files["IMG_1.jpg"] != nil }, "the photo never joined the running push")
        #expect(backend.files["big.mov"] == nil)
        backend.open("big.mov")
        let summary = try #require(await run.value)
        #expect(summary.uploadedFiles == 2)
        // Sent, so not held back: the watcher has nothing to look at again.
        #expect(summary.heldBack.isEmpty)
        #expect(setup.counter.summaries.withLock { $0.count } == 1)
    }
}
