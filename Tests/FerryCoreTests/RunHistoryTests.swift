@testable import FerryJournal
@testable import FerryCore
import FerryTestSupport
import Foundation
import Testing


/// The run history: what a run's events add up to, the store, the health report.
@Suite("Run history")
struct RunHistoryTests {
    @Test("a run's events add up per queue and direction, with failures by class, resumed bytes and offline time")
    func tally() {
        var tally = RunTally(startedAt: 100)
        tally.add(.transferred(path: "a.jpg", queue: "media", direction: .upload, bytes: 1000, resumedFrom: 0), at: 101)
        tally.add(.transferred(path: "b.jpg", queue: "media", direction: .upload, bytes: 3000, resumedFrom: 500), at: 102)
        tally.add(.transferred(path: "t.jpg", queue: "thumbnails", direction: .download, bytes: 10, resumedFrom: 0), at: 102)
        tally.add(.deleted(path: "old.jpg", queue: "media", side: .deleteRemote), at: 102)
        tally.add(.failed(path: "c.jpg", queue: "media", message: "timeout", willRetry: true, attempt: 1), at: 103)
        tally.add(.failed(path: "c.jpg", queue: "media", message: "denied", willRetry: false, attempt: 2), at: 104)
        tally.add(.conflict(path: "d.jpg", queue: "media", message: "both changed"), at: 104)
        tally.add(.remoteOffline(remote: "nas", message: "refused", nextProbeSeconds: 1), at: 110)
        tally.add(.remoteOnline(remote: "nas", offlineSeconds: 99), at: 130)
        tally.add(.remoteOffline(remote: "nas", message: "refused", nextProbeSeconds: 1), at: 140)
        tally.finish(at: 150)
        #expect(tally.moved == [
            RunTally.Moved(queue: "media", direction: "upload", files: 2, bytes: 4000),
            RunTally.Moved(queue: "thumbnails", direction: "download", files: 1, bytes: 10),
            RunTally.Moved(queue: "media", direction: "delete-remote", files: 1, bytes: 0),
        ])
        #expect(tally.retriedFailures == 1 && tally.permanentFailures == 1 && tally.conflicts == 1)
        #expect(tally.resumedBytes == 500)
        #expect(tally.offlineSeconds == 30) // 20 s while the run saw it, and 10 s still open at the end
    }

    @Test("the peak rate is the fastest second between samples; a short run gets its average")
    func peakRate() {
        var tally = RunTally(startedAt: 0)
        tally.sample(bytesDone: 0, at: 0)
        tally.sample(bytesDone: 500, at: 0.5) // less than a second: not a measurement
        tally.sample(bytesDone: 1000, at: 1)
        tally.sample(bytesDone: 5000, at: 2)
        tally.sample(bytesDone: 6000, at: 4)
        #expect(tally.peakBytesPerSecond == 4000)
        var short = RunTally(startedAt: 10)
        short.add(.transferred(path: "a", queue: "media", direction: .upload, bytes: 800, resumedFrom: 0), at: 10.2)
        short.finish(at: 10.4)
        #expect(abs(short.peakBytesPerSecond - 2000) < 0.001)
    }

    @Test("a daemon run's trigger comes from its reason")
    func triggers() {
        #expect(RunTrigger.of(reason: "watch") == .watch)
        #expect(RunTrigger.of(reason: "poll, rescan") == .watch)
        #expect(RunTrigger.of(reason: "schedule: push media") == .schedule)
        #expect(RunTrigger.of(reason: "watch, schedule: push media") == .schedule)
        #expect(RunTrigger.of(reason: "api: run") == .manual)
        #expect(RunTrigger.of(reason: "watch, api: retry") == .manual)
    }

    static func record(_ folder: String, endedAt: Double, moved: [RunTally.Moved] = [], failures: Int = 0,
                       offline: Double = 0, journal: Int64 = 0, files: Int = 0) -> RunRecord {
        var record = RunRecord(folder: folder, mode: "push", localRoot: "/\(folder)", remote: "nas", trigger: .watch,
                               startedAt: endedAt - 10, endedAt: endedAt, outcome: failures > 0 ? "failed" : "ok",
                               tally: RunTally(startedAt: endedAt - 10), journalBytes: journal, trackedFiles: files)
        record.moved = moved
        record.permanentFailures = failures
        record.offlineSeconds = offline
        return record
    }

    @Test("the history keeps runs with what moved, answers by folder and hour, and forgets old ones")
    func store() async throws {
        let directory = TemporaryDirectory()
        let history = try await StateFolder(directory: directory.path).history()
        let now = (Date().timeIntervalSince1970 / 3600).rounded(.down) * 3600 + 1800
        try await history.append(Self.record("photos", endedAt: now - 86_400 * 40, moved: [.init(queue: "media", direction: "upload", files: 9, bytes: 9)]))
        try await history.append(Self.record("photos", endedAt: now - 7200, moved: [.init(queue: "media", direction: "upload", files: 2, bytes: 200)]))
        try await history.append(Self.record("gpx", endedAt: now, moved: [.init(queue: "gpx", direction: "download", files: 1, bytes: 50),
                                                                          .init(queue: "gpx", direction: "upload", files: 3, bytes: 30)]))
        let all = try await history.runs()
        #expect(all.map(\.folder) == ["gpx", "photos", "photos"])
        #expect(all[0].moved.count == 2 && all[0].files == 4 && all[0].bytes == 80)
        #expect(try await history.runs(folder: "photos", limit: 1).map(\.endedAt) == [now - 7200])
        let hourly = try await history.hourlyTransfers(since: now - 86_400)
        #expect(hourly.contains(HourlyTransfers(hour: now - 1800 - 7200, direction: "upload", files: 2, bytes: 200)))
        #expect(hourly.contains(HourlyTransfers(hour: now - 1800, direction: "download", files: 1, bytes: 50)))
        #expect(try await history.prune(before: now - 86_400 * 30) == 1)
        #expect(try await history.runs().count == 2)
        // Outages: one at a time per remote; a stale open one is closed at the next start.
        try await history.outageBegan(remote: "nas", at: now - 100)
        try await history.outageBegan(remote: "nas", at: now - 50)
        try await history.outageEnded(remote: "nas", at: now - 40)
        try await history.outageBegan(remote: "dav", at: now - 30)
        try await history.closeOpenOutages(at: now - 20)
        #expect(try await history.outages(since: now - 1000) == [OutageRecord(remote: "nas", startedAt: now - 100, endedAt: now - 40),
                                                                  OutageRecord(remote: "dav", startedAt: now - 30, endedAt: now - 20)])
    }

    @Test("health: failures that grow, a queue that has not moved for a day, a remote offline too long, a journal outgrowing its files")
    func health() {
        let now = 1_000_000.0, day = HealthCheck.day
        let runs = [
            Self.record("photos", endedAt: now - day * 1.5, failures: 1, journal: 1 << 20, files: 1000),
            Self.record("photos", endedAt: now - 3600, failures: 2, offline: 0),
            Self.record("photos", endedAt: now - 60, failures: 3, journal: 4 << 20, files: 1100),
            Self.record("gpx", endedAt: now - 60, moved: [.init(queue: "gpx", direction: "upload", files: 1, bytes: 1)], offline: day * 0.3),
        ]
        let waiting = [
            HealthCheck.WaitingQueue(folder: "photos", queue: "archives", files: 7, oldestSince: now - day * 2),
            HealthCheck.WaitingQueue(folder: "gpx", queue: "gpx", files: 1, oldestSince: now - day * 2), // it moved today
            HealthCheck.WaitingQueue(folder: "photos", queue: "media", files: 3, oldestSince: now - 600), // waits, but not a day
        ]
        let outages = [OutageRecord(remote: "dav", startedAt: now - day * 3, endedAt: now - day + 3600 * 6),
                       OutageRecord(remote: "nas", startedAt: now - 600, endedAt: nil)]
        let findings = HealthCheck.examine(runs: runs, outages: outages, waiting: waiting, now: now, offlineAlert: 0.2)
        #expect(findings.map(\.kind) == [.failuresGrowing, .queueStalled, .remoteOffline, .remoteOffline, .journalGrowing])
        #expect(findings.map(\.subject) == ["photos", "photos/archives", "dav", "nas", "journal"])
        #expect(findings[0].message.contains("5 failures in the last day, 1 the day before"))
        // dav's outage overlaps the last day by 6 h (25 %); nas's runs were offline 30 % of it.
        #expect(findings[2].message.contains("25%") && findings[3].message.contains("30%"))
        let quiet = HealthCheck.examine(runs: [Self.record("photos", endedAt: now - 60)], outages: [], waiting: [], now: now, offlineAlert: 0.1)
        #expect(quiet.isEmpty)
    }

    @Test("health: a folder whose last run was held, a scheduled folder gone too long without a run that went through, most runs failing")
    func holdsAndOverdue() {
        let now = 10_000_000.0, day = HealthCheck.day
        func run(_ folder: String, _ endedAt: Double, outcome: String, error: String? = nil) -> RunRecord {
            var record = Self.record(folder, endedAt: endedAt)
            record.outcome = outcome
            record.error = error
            return record
        }
        let runs = [
            run("photos", now - 3 * day, outcome: "ok"),
            run("photos", now - 3600, outcome: "error", error: "held: the run would replace 900 of 1000 files on the remote (limit 300); …"),
            run("photos", now - 60, outcome: "stopped"),
            run("tracks", now - 2 * day, outcome: "ok"),
            run("tracks", now - 3000, outcome: "error", error: "cannot list nas: connection refused"),
            run("tracks", now - 2000, outcome: "error", error: "cannot list nas: connection refused"),
            run("tracks", now - 1000, outcome: "error", error: "cannot list nas: connection refused"),
            run("notes", now - 5 * day, outcome: "error", error: "held: …"),
            run("notes", now - 600, outcome: "ok"),
        ]
        let expectations = [HealthCheck.Expectation(folder: "tracks", schedule: "push tracks every 3600 s", maxGap: 7200),
                            HealthCheck.Expectation(folder: "notes", schedule: "push notes every 3600 s", maxGap: 7200)]
        let findings = HealthCheck.examine(runs: runs, outages: [], waiting: [], now: now, offlineAlert: 1, expectations: expectations)
        #expect(findings.map(\.kind) == [.held, .overdue, .runsFailing])
        #expect(findings.map(\.subject) == ["photos", "tracks", "tracks"])
        #expect(findings[0].message.contains("--accept-changes") && findings[0].message.contains("replace 900 of 1000"))
        #expect(findings[1].message.contains("push tracks every 3600 s"))
        #expect(findings[2].message.contains("3 of its 3 runs"))
    }
}
