import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

/// `ferry pull` of a large file over several ranged streams, killed with SIGKILL while
/// the streams write the partial file out of order.
@Suite("Parallel ranged pull through the ferry command", .integration)
struct ParallelPullRunTests {
    @Test("kill -9 while the streams write ahead of the good prefix; the next pull trusts only the ledger's prefix")
    func killWhileStreamsWriteAhead() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        // Segments are 4 MiB, handed out in order. The proxy holds the third (from 8 MiB):
        // the first two make a good prefix of 8 MiB, the other streams write past it, and
        // the file cannot complete, so the kill lands in the middle on any machine.
        let gate = work.directory.child("gate")
        try FileManager.default.createDirectory(atPath: gate, withIntermediateDirectories: true)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0,
                                         options: ["--hold", "^GET \\S*/VID_0001\\.mp4 bytes=8388608-:0", "--gate", gate])
        let size = 40 << 20
        try TreeGenerator.write(at: server.directory + "/root/videos/VID_0001.mp4", size: size, seed: 91, modified: 1_700_000_000)
        let config = """
            remotes:
              nas:
                type: webdav
                url: \(proxy.url("/dav/videos"))
                multi_stream_cutoff: 8M
            folders:
              videos:
                path: dst
                remote: nas
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let partial = work.directory.child("dst/.VID_0001.mp4.ferry-part")
        let ledger = PartialFileLedger.path(forPartial: partial)
        let running = try FerryProcess(["pull", "videos", "--state", work.state, "--json", "--ignore-hidden-names"],
                                       in: work.directory.path)
        // Killed once the ledger vouches for the 8 MiB before the held segment and the
        // streams have written past it.
        let reached = await FerryIntegrationTests.when({
            guard let bytes = FileManager.default.contents(atPath: ledger).map(Array.init),
                  let good = PartialFileLedger.decode(bytes), good >= 8 << 20,
                  let written = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? NSNumber)?.int64Value
            else { return false }
            return written > good
        }, do: { running.killHard() })
        _ = await running.wait()
        #expect(reached, "the ledger never showed a good prefix with bytes written past it")
        #expect(FileManager.default.fileExists(atPath: ledger))

        let resumed = try await FerryProcess.run(["pull", "videos", "--state", work.state, "--json", "--ignore-hidden-names"], in: work.directory.path)
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        let event = try #require(resumed.events(named: "transferred").first)
        let resumedFrom = (event["resumed_from"] as? NSNumber)?.intValue ?? 0
        let received = (event["bytes"] as? NSNumber)?.intValue ?? 0
        #expect(resumedFrom == 8 << 20, "resumed from \(resumedFrom)")
        #expect(resumedFrom + received == size)
        #expect(try TreeComparison.sameContent(work.directory.child("dst/VID_0001.mp4"),
                                               server.directory + "/root/videos/VID_0001.mp4"))
        #expect(!FileManager.default.fileExists(atPath: ledger) && !FileManager.default.fileExists(atPath: partial))
    }
}
