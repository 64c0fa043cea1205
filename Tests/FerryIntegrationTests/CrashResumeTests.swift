import FerryTestSupport
import Foundation
import Testing

@Suite("kill -9 in the middle of a push", .integration)
struct CrashResumeTests {
    @Test("the next push completes the tree, sends no completed file again, leaves no temporary file")
    func killDuringManySmallFiles() async throws {
        let work = Workspace()
        for index in 0..<40 {
            try TreeGenerator.write(at: work.source + "/day \(index / 10)/IMG_\(index).jpg", size: 512 * 1024, seed: UInt64(index),
                                    modified: 1_700_000_000 + Double(index))
        }
        // A bandwidth limit makes the run last long enough to be killed in the middle.
        let running = try FerryProcess(
            ["push", work.source, "--to", work.destination, "--state", work.state, "--json", "--bwlimit", "1M"],
            in: work.directory.path)
        await when({ running.outputSoFar.components(separatedBy: "\"event\":\"transferred\"").count > 8 },
                   do: { running.killHard() })
        let killed = await running.wait()
        #expect(killed.status == 128 + 9)
        let completedBeforeKill = Set(killed.transferredPaths)
        #expect(completedBeforeKill.count >= 8 && completedBeforeKill.count < 40)

        // Whatever is under a final name right after the kill is complete and correct.
        for (path, _) in try TreeComparison.files(in: work.destination) where !path.hasSuffix(".ferry-part") {
            #expect(try TreeComparison.sameContent(work.source + "/" + path, work.destination + "/" + path), "torn file \(path)")
        }

        let resumed = try await work.push()
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        let resent = Set(resumed.transferredPaths).intersection(completedBeforeKill)
        #expect(resent.isEmpty, "sent again: \(resent.sorted())")
        // Every file is accounted for exactly once: sent now, or found complete on the target
        // (those finished before the kill, and one renamed just before it but not yet recorded).
        #expect((resumed.int("uploaded") ?? 0) + (resumed.int("skipped") ?? 0) == 40)
        #expect((resumed.int("uploaded") ?? 0) <= 40 - completedBeforeKill.count)
        #expect(try TreeComparison.differences(work.source, work.destination) == [])
        #expect(try work.temporaryFiles(in: work.destination) == [])
    }

    /// Pushes an 8 MiB file slowly and kills the push once 1 MiB of it is on the target.
    private static func killHalfWayThroughLargeFile(_ work: Workspace) async throws {
        try TreeGenerator.write(at: work.source + "/VID_0001.mp4", size: 8 << 20, seed: 77, modified: 1_700_000_000.5)
        let partial = work.destination + "/" + ".VID_0001.mp4.ferry-part"
        let running = try FerryProcess(
            ["push", work.source, "--to", work.destination, "--state", work.state, "--json", "--bwlimit", "512k"],
            in: work.directory.path)
        await when({
            let size = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? NSNumber)?.intValue ?? 0
            return size >= 1 << 20
        }, do: { running.killHard() })
        _ = await running.wait()
        #expect(!FileManager.default.fileExists(atPath: work.destination + "/VID_0001.mp4"))
    }

    @Test("a large file interrupted half-way is continued, not sent from the start")
    func killDuringLargeFileResumes() async throws {
        let work = Workspace()
        try await Self.killHalfWayThroughLargeFile(work)

        let resumed = try await work.push()
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        let event = try #require(resumed.events(named: "transferred").first)
        let resumedFrom = (event["resumed_from"] as? NSNumber)?.intValue ?? 0
        let sent = (event["bytes"] as? NSNumber)?.intValue ?? 0
        #expect(resumedFrom >= 1 << 20)
        #expect(resumedFrom + sent == 8 << 20)
        #expect(try TreeComparison.differences(work.source, work.destination) == [])
    }

    @Test("a large file interrupted half-way and then cut below the resumable size is sent whole; its partial file goes")
    func killDuringLargeFileThenShrunk() async throws {
        let work = Workspace()
        try await Self.killHalfWayThroughLargeFile(work)
        // A small file's upload is named in place: it used to leave the 1 MiB partial file
        // of the earlier version beside it for good.
        try TreeGenerator.write(at: work.source + "/VID_0001.mp4", size: 200 << 10, seed: 78, modified: 1_700_000_100.5)

        let pushed = try await work.push()
        #expect(pushed.status == 0, "\(pushed.diagnostics)")
        #expect(pushed.int("uploaded") == 1)
        #expect(try TreeComparison.differences(work.source, work.destination) == [])
        #expect(try work.temporaryFiles(in: work.destination) == [])
    }
}
