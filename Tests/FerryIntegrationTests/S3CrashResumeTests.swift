import FerryTestSupport
import Foundation
import Testing

@Suite("kill -9 in the middle of a multipart upload to S3", .integration)
struct S3CrashResumeTests {
    @Test("the next push continues the upload its journal recorded and sends only the parts the store lacks")
    func killDuringMultipartUpload() async throws {
        let server = try await S3TestServer(.moto)
        let work = Workspace()
        // The proxy holds the third part: the kill lands while it is on its way, with
        // exactly two parts stored, however fast or slow the machine is.
        let gate = work.directory.child("gate")
        let proxy = try await FaultProxy.holdingPartUpload(after: 2, upstream: server.endpoint, gate: gate)
        let size = 5 * (5 << 20) + (1 << 20)
        try TreeGenerator.write(at: work.source + "/VID_0001.mov", size: size, seed: 91, modified: 1_700_000_000.25)
        let config = """
            remotes:
              store:
                type: s3
                bucket: \(S3TestServer.bucket)
                prefix: crash
                endpoint: \(proxy.origin)
                multipart_threshold: 5M
                multipart_part_size: 5M
                multipart_concurrency: 1
                # moto dates every upload 2010-11-10, past any age: the push that resumes
                # aborts abandoned uploads first, and must keep the one the journal continues.
            folders:
              videos:
                path: src
                remote: store
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let running = try FerryProcess(["push", "videos", "--state", work.state, "--json"],
                                       in: work.directory.path, environment: server.environment)
        await when({ FileManager.default.fileExists(atPath: gate + "/held") }, do: { running.killHard() })
        let killed = await running.wait()
        #expect(killed.status == 128 + 9, "\(killed.diagnostics)")
        let heldAtKill = server.partsHeld(key: "crash/VID_0001.mov")
        #expect(heldAtKill.count == 2, "held \(heldAtKill)")
        // Another writer starts an upload of the same key: the journal's checkpoint, not
        // the store's list of uploads, says which one this push continues.
        server.startUpload(key: "crash/VID_0001.mov")

        let resumed = try await FerryProcess.run(["push", "videos", "--state", work.state, "--json"], in: work.directory.path,
                                                 environment: server.environment)
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        let event = try #require(resumed.events(named: "transferred").first)
        let resumedFrom = (event["resumed_from"] as? NSNumber)?.intValue ?? 0
        #expect(resumedFrom == heldAtKill.count * (5 << 20), "resumed from \(resumedFrom) with parts \(heldAtKill) held")
        #expect(server.unfinishedUploads(prefix: "crash/") == ["crash/VID_0001.mov"], "only the other writer's upload is left")

        let restored = work.directory.child("restored")
        let pull = try await FerryProcess.run(["pull", restored, "--from", "store", "--state", work.directory.child("fresh"), "--json"],
                                              in: work.directory.path, environment: server.environment)
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(try TreeComparison.differences(work.source, restored) == [])
    }
}
