@testable import FerryJournal
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Synchronization
import Testing

import FerryConfig
@testable import FerryCore
@testable import FerryEngine
@testable import FerryPlanning

/// The engine's behaviours through a whole run (real folder, real journal), against an
/// in-memory backend with scripted faults and a clock that does not wait: no server, no
/// sleep, and nothing that depends on how fast the machine is.
@Suite("the run engine against an in-memory backend")
struct TransferEngineTests {
    struct Setup: Sendable {
        let folder = TemporaryDirectory("ferry-engine")
        let backend = InMemoryBackend()
        let clock = InstantClock()
        let sink = RecordingSink()
        var config = Config.defaults
        var options = RunOptions()

        var source: String { folder.child("src") }
        var state: String { folder.child("state") }

        init(files: [String], attempts: Int = 3, transfers: Int = 1) throws {
            for (index, path) in files.enumerated() {
                try TreeGenerator.write(at: source + "/" + path, size: 100 + index, seed: UInt64(index))
            }
            config.retry = RetryPolicy(attempts: attempts, baseDelay: .seconds(1), factor: 2, maxDelay: .seconds(30))
            config.retry.offlineWait = .seconds(600)
            options.transfers = transfers
            options.clock = clock
        }

        func run() async throws -> RunSummary {
            let pair = FolderPair(name: "test", localRoot: source, backend: backend, remoteRoot: .root, mode: .push, ignore: [])
            return try await PairRun(pair: pair, config: config, state: StateFolder(directory: state), options: options,
                                     sink: sink, progress: RunProgress()).run()
        }

        func records() async throws -> [String: FileRecord] {
            let journal = try #require(try await StateFolder(directory: state).existingJournal())
            let pair = try #require(try await journal.folderPairs().first)
            return Dictionary(uniqueKeysWithValues: try await journal.records(pairId: try #require(pair.id)).map { ($0.path, $0) })
        }

        func events(where match: (RunEvent) -> Bool) -> [RunEvent] {
            sink.events.withLock { $0.filter(match) }
        }
    }

    static let mixed = ["track.gpx", "b.jpg", "photos.zip", ".thumbnails/b.jpg", "a.jpg", ".thumbnails/a.jpg"]

    @Test("one transfer at a time: every thumbnail before any photo, photos before tracks, archives last")
    func priorityOrder() async throws {
        let setup = try Setup(files: Self.mixed)
        let summary = try await setup.run()
        #expect(summary.uploadedFiles == 6)
        // The catalog of hidden names (`.ferry-catalog/`) is written after the jobs.
        #expect(setup.backend.uploadAttempts.filter { !$0.hasPrefix(".ferry-catalog/") }
                == [".thumbnails/a.jpg", ".thumbnails/b.jpg", "a.jpg", "b.jpg", "track.gpx", "photos.zip"])
    }

    @Test("retryable failures wait their backoff (1 s, then 2 s of the run's clock) and then succeed")
    func retriesWithBackoff() async throws {
        let setup = try Setup(files: ["a.jpg", "b.jpg"])
        setup.backend.failNext("a.jpg", with: [BackendError(.serverError, "503"), BackendError(.serverError, "503")])
        let summary = try await setup.run()
        #expect(summary.uploadedFiles == 2 && summary.failedFiles == 0)
        #expect(setup.sink.retries == 2)
        #expect(setup.backend.uploadAttempts.filter { $0 == "a.jpg" }.count == 3)
        #expect(setup.clock.elapsed >= 3)
        let record = try #require(try await setup.records()["a.jpg"])
        #expect(record.status == .inSync && record.attempts == 0 && record.lastError == nil)
    }

    @Test("attempts run out in every pass: syncError with the last error after attempts × passes, and the other files go on")
    func attemptsRunOut() async throws {
        let setup = try Setup(files: ["a.jpg", "b.jpg"], attempts: 2)
        setup.backend.failNext("a.jpg", with: Array(repeating: BackendError(.serverError, "503 busy"), count: 7))
        let summary = try await setup.run()
        #expect(summary.uploadedFiles == 1 && summary.failedFiles == 1)
        // 2 attempts in each of the 3 passes (the default), no more.
        #expect(setup.backend.uploadAttempts.filter { $0 == "a.jpg" }.count == 6)
        let record = try #require(try await setup.records()["a.jpg"])
        #expect(record.status == .syncError && record.attempts == 6)
        #expect(record.lastError?.contains("503 busy") == true)
    }

    @Test("a permanent failure is not retried")
    func permanentFailure() async throws {
        let setup = try Setup(files: ["a.jpg"])
        setup.backend.failNext("a.jpg", with: [BackendError(.permissionDenied, "403 Forbidden")])
        let summary = try await setup.run()
        #expect(summary.failedFiles == 1 && setup.sink.retries == 0)
        #expect(try await setup.records()["a.jpg"]?.status == .syncError)
    }

    @Test("an outage: offline is reported, probes back off, the run resumes when the backend answers, no attempt is used up")
    func outageAndReturn() async throws {
        let setup = try Setup(files: ["a.jpg", "b.jpg", "c.jpg"])
        // The upload of b.jpg finds the server gone; three more calls (probes) are refused.
        setup.backend.goOffline(atUploadOf: "b.jpg", refusing: 4)
        let summary = try await setup.run()
        #expect(summary.uploadedFiles == 3 && summary.failedFiles == 0)
        #expect(setup.sink.retries == 0)
        #expect(setup.events { if case .remoteOffline = $0 { true } else { false } }.count == 1)
        #expect(setup.events { if case .remoteOnline = $0 { true } else { false } }.count == 1)
        #expect(setup.backend.refusedWhileOffline == 4)
        #expect(Set(setup.backend.files.keys) == ["a.jpg", "b.jpg", "c.jpg"])
    }

    @Test("offline for longer than offline_wait: the run ends, the files stay queued with their attempts")
    func outageGivesUp() async throws {
        var setup = try Setup(files: ["a.jpg", "b.jpg", "c.jpg"])
        setup.config.retry.offlineWait = .seconds(60)
        setup.backend.goOffline(atUploadOf: "b.jpg", refusing: .max)
        let summary = try await setup.run()
        #expect(summary.uploadedFiles == 1 && summary.failedFiles == 2)
        #expect(setup.clock.elapsed >= 60)
        let records = try await setup.records()
        for path in ["b.jpg", "c.jpg"] {
            let record = try #require(records[path])
            #expect(record.status == .needsUpload && record.attempts == 0, "\(record)")
            #expect(record.lastError?.contains("did not answer") == true)
        }
    }

    @Test("cancelled mid-transfer: the run stops, the file stays pending, nothing is marked failed")
    func cancellation() async throws {
        let setup = try Setup(files: ["a.jpg", "b.jpg"])
        setup.backend.hold("a.jpg")
        let run = Task { try await setup.run() }
        try #require(await waitForEvent { setup.backend.isWaitingAtGate("a.jpg") }, "a.jpg never reached the backend")
        run.cancel()
        _ = try? await run.value
        #expect(setup.backend.files.isEmpty)
        let records = try await setup.records()
        #expect(records["a.jpg"]?.status.isPending == true)
        #expect(records["b.jpg"]?.status.isPending == true)
        #expect(setup.events { if case .failed = $0 { true } else { false } }.isEmpty)
    }

    @Test("files handed to a running engine join its run, in priority, while a large upload is still going")
    func joinsRunningRun() async throws {
        var setup = try Setup(files: ["big.mov"], transfers: 2)
        let feed = JobFeed()
        setup.options.jobFeed = feed
        setup.backend.hold("big.mov")
        let run = Task { [setup] in try await setup.run() }
        defer { run.cancel() }  // a failed wait below leaves no run polling its gate
        try #require(await waitForEvent { setup.backend.isWaitingAtGate("big.mov") }, "big.mov never reached the backend")

        try TreeGenerator.write(at: setup.source + "/.thumbnails/new.jpg", size: 50, seed: 9)
        let journal = try await StateFolder(directory: setup.state).journal()
        let pairId = try #require(try await journal.folderPairs().first?.id)
        let pair = FolderPair(name: "test", localRoot: setup.source, backend: setup.backend, remoteRoot: .root, mode: .push, ignore: [])
        let made = try await NewFileJobs.make(paths: [".thumbnails/new.jpg"], pair: pair, pairId: pairId, journal: journal,
                                              classifier: try QueueClassifier(rules: setup.config.queues, defaultQueue: "media"),
                                              ignore: try GlobSet([]), cutoff: nil, at: 0)
        #expect(feed.push(made.jobs))
        try #require(await waitForEvent { setup.backend.files[".thumbnails/new.jpg"] != nil },
                     "the thumbnail fed in while big.mov was held never went")
        #expect(setup.backend.files["big.mov"] == nil, "the thumbnail went while the video was still held")
        setup.backend.open("big.mov")
        let summary = try await run.value
        #expect(summary.uploadedFiles == 2)
    }
}

/// A run that stops as a whole says in which phase, and keeps the error that caused it.
@Suite("run errors keep their phase and cause")
struct RunErrorTests {
    @Test("an unreachable remote stops the listing phase, with the backend's error: the daemon waits it out")
    func unreachableListing() async throws {
        let setup = try TransferEngineTests.Setup(files: ["a.jpg"])
        setup.backend.setOffline(true)
        await #expect {
            _ = try await setup.run()
        } throws: { error in
            guard let error = error as? RunError, case let .backend(cause)? = error.cause else { return false }
            return error.phase == .remoteListing && cause.code == .unreachable && error.remoteUnreachable
        }
    }

    @Test("a missing local folder stops the scan phase and is not taken for an outage")
    func refusedListing() async throws {
        let setup = try TransferEngineTests.Setup(files: ["a.jpg"])
        try? FileManager.default.removeItem(atPath: setup.source)
        let pair = FolderPair(name: "test", localRoot: setup.folder.child("missing/deeper"), backend: setup.backend,
                              remoteRoot: .root, mode: .push, ignore: [])
        await #expect {
            _ = try await PairRun(pair: pair, config: setup.config, state: StateFolder(directory: setup.state), options: setup.options,
                                  sink: setup.sink, progress: RunProgress()).run()
        } throws: { error in
            guard let error = error as? RunError else { return false }
            return error.phase == .localScan && !error.remoteUnreachable
        }
    }
}
