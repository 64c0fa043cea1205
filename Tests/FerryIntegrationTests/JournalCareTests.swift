import FerryCore
import FerryJournal
import FerryTestSupport
import Foundation
import Testing

@Suite("ferry doctor, ferry retry, a damaged journal, and the history's count of its files", .integration)
struct JournalCareTests {
    @Test("doctor: a sound journal is ok; a transfer killed half-way is reported as interrupted, exit 0")
    func doctorReportsInterrupted() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/VID_0001.mp4", size: 6 << 20, seed: 5)
        let partial = work.destination + "/.VID_0001.mp4.ferry-part"
        let running = try FerryProcess(
            ["push", work.source, "--to", work.destination, "--state", work.state, "--json", "--bwlimit", "1M"],
            in: work.directory.path)
        await when({
            ((try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? NSNumber)?.intValue ?? 0) > 0
        }, do: { running.killHard() })
        _ = await running.wait()

        let doctor = try await work.ferry(["doctor", "--state", work.state, "--json"])
        #expect(doctor.status == 0, "\(doctor.diagnostics)")
        let report = try #require(doctor.events.first)
        #expect(report["integrity"] as? String == "ok")
        let interrupted = try #require(report["interrupted"] as? [[String: Any]])
        let files = interrupted.first?["files"] as? [[String: Any]]
        #expect(files?.first?["path"] as? String == "VID_0001.mp4")
        #expect(files?.first?["status"] as? String == "uploading")
        #expect(interrupted.first?["running"] == nil || interrupted.first?["running"] is NSNull)

        let text = try await work.ferry(["doctor", "--state", work.state])
        #expect(text.standardOutput.contains("integrity: ok"))
        #expect(text.standardOutput.contains("interrupted (no process holds the pair); the next run continues them"))

        #expect(try await work.push().status == 0)
        let after = try await work.ferry(["doctor", "--state", work.state])
        #expect(after.standardOutput.contains("no transfer left half-done"), "\(after.diagnostics)")
    }

    @Test("a damaged journal stops a run with exit 1 and a message that says what to do; doctor exits 1")
    func damagedJournal() async throws {
        let work = Workspace()
        for index in 0..<400 {
            try TreeGenerator.write(at: work.source + "/d\(index % 7)/IMG_\(index).jpg", size: 10, seed: UInt64(index))
        }
        #expect(try await work.push().status == 0)
        // Overwrite pages in the middle of the database file (a bad disk, a bad copy).
        let path = work.state + "/journal.sqlite"
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let size = try handle.seekToEnd()
        #expect(size > 8192)
        try handle.seek(toOffset: 4096)
        handle.write(Data(repeating: 0xA5, count: Int(size) - 8192))
        try handle.close()

        let push = try await work.push()
        #expect(push.status == 1, "\(push.diagnostics)")
        #expect(push.standardError.contains("journal"), "\(push.diagnostics)")
        #expect(push.standardError.contains("move it aside and run again"), "\(push.diagnostics)")
        #expect(push.standardError.split(separator: "\n").count == 1, "\(push.diagnostics)")

        let doctor = try await work.ferry(["doctor", "--state", work.state])
        #expect(doctor.status == 1, "\(doctor.diagnostics)")
        #expect((doctor.standardOutput + doctor.standardError).contains("move the journal aside"))
    }

    @Test("retry: a file that failed for good becomes pending again and the next push sends it")
    func retryFailedFile() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/a/IMG_1.jpg", size: 100, seed: 1)
        try TreeGenerator.write(at: work.source + "/b/IMG_2.jpg", size: 100, seed: 2)
        // A folder stands where a/IMG_1.jpg must go: that upload fails for good.
        try TreeGenerator.write(at: work.destination + "/a/IMG_1.jpg/in-the-way", size: 1, seed: 3)
        let first = try await work.push()
        #expect(first.status == 1, "\(first.diagnostics)")
        let errors = try await work.ferry(["status", work.source, "--state", work.state, "--errors"])
        #expect(errors.standardOutput.contains("failed: a/IMG_1.jpg"), "\(errors.diagnostics)")

        try FileManager.default.removeItem(atPath: work.destination + "/a/IMG_1.jpg")
        let retry = try await work.ferry(["retry", work.source + "/a", "--state", work.state])
        #expect(retry.status == 0, "\(retry.diagnostics)")
        #expect(retry.standardOutput.contains("retry"))
        #expect(retry.standardOutput.contains("a/IMG_1.jpg"))
        let status = try await work.ferry(["status", work.source, "--state", work.state, "--json"])
        #expect(!status.standardOutput.contains("syncError"), "\(status.standardOutput)")

        let second = try await work.push()
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(second.transferredPaths == ["a/IMG_1.jpg"])

        let nothing = try await work.ferry(["retry", "/nowhere/at/all", "--state", work.state])
        #expect(nothing.status == 2)
        #expect(nothing.standardError.contains("not inside any synced folder"))
    }

    @Test("each run's history row counts the files the journal tracks, all folders together")
    func historyCountsTrackedFiles() async throws {
        let work = Workspace()
        for index in 0..<3 { try TreeGenerator.write(at: work.source + "/IMG_\(index).jpg", size: 10, seed: UInt64(index)) }
        #expect(try await work.push().status == 0)
        let second = work.directory.child("second"), secondRemote = work.directory.child("second-remote")
        for index in 0..<2 { try TreeGenerator.write(at: second + "/GPX_\(index).gpx", size: 10, seed: UInt64(index)) }
        let push = try await work.ferry(["push", second, "--to", secondRemote, "--state", work.state])
        #expect(push.status == 0, "\(push.diagnostics)")

        let history = try #require(try await StateFolder(directory: work.state).existingHistory())
        let runs = try await history.runs(folder: nil, limit: 5)
        #expect(runs.map(\.trackedFiles) == [5, 3], "newest first")
    }
}

@Suite("the free-space guard on downloads", .integration)
struct FreeSpaceGuardTests {
    @Test("a download that would leave less than min_free_space is refused before a byte is written")
    func refusesDownload() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.destination + "/VID_1.mp4", size: 200_000, seed: 1)
        try TreeGenerator.write(at: work.destination + "/IMG_1.jpg", size: 1000, seed: 2)
        // Keep more free than any disk has: every download must be refused.
        try Data("transfers:\n  min_free_space: 1000T\n".utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let pull = try await work.ferry(["pull", work.source, "--from", work.destination, "--state", work.state, "--json"])
        #expect(pull.status == 1, "\(pull.diagnostics)")
        let failures = pull.events(named: "failed")
        #expect(failures.count == 2)
        #expect(failures.allSatisfy { ($0["error"] as? String)?.contains("not enough free space") == true })
        #expect(pull.events(named: "retrying").isEmpty)
        #expect(try TreeComparison.files(in: work.source).isEmpty)

        try Data("transfers:\n  min_free_space: 0%\n".utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let again = try await work.ferry(["pull", work.source, "--from", work.destination, "--state", work.state, "--json"])
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(try TreeComparison.differences(work.destination, work.source) == [])
    }
}
