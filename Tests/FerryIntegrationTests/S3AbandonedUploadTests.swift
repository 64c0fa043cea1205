import FerryTestSupport
import Foundation
import Testing

/// Multipart uploads left unfinished on an S3 remote: `ferry doctor --cleanup` aborts them,
/// a push aborts those past `abandoned_uploads_after` on its own, and neither touches the
/// one the journal means to continue. On moto, which dates every upload 2010-11-10, so
/// every upload is past any age.
@Suite("abandoned S3 uploads", .integration)
struct S3AbandonedUploadTests {
    @Test("doctor --cleanup and the next push abort abandoned uploads and keep the one the journal continues")
    func cleanupKeepsTheResumableUpload() async throws {
        let server = try await S3TestServer(.moto)
        let work = Workspace()
        // The proxy holds the second part: the kill lands while it is on its way, with
        // exactly one part stored, however fast or slow the machine is.
        let gate = work.directory.child("gate")
        let proxy = try await FaultProxy.holdingPartUpload(after: 1, upstream: server.endpoint, gate: gate)
        try TreeGenerator.write(at: work.source + "/VID_0001.mov", size: 4 * (5 << 20) + (1 << 20), seed: 92, modified: 1_700_000_000.5)
        let config = """
            remotes:
              store:
                type: s3
                bucket: \(S3TestServer.bucket)
                prefix: tidy
                endpoint: \(proxy.origin)
                multipart_threshold: 5M
                multipart_part_size: 5M
                multipart_concurrency: 1
                abandoned_uploads_after: 2d
            folders:
              videos:
                path: src
                remote: store
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let running = try FerryProcess(["push", "videos", "--state", work.state, "--json"],
                                       in: work.directory.path, environment: server.environment)
        await when({ FileManager.default.fileExists(atPath: gate + "/held") }, do: { running.killHard() })
        _ = await running.wait()
        let held = server.partsHeld(key: "tidy/VID_0001.mov")
        #expect(held.count == 1, "held \(held)")
        // What another crashed tool (or an older run) left: one under the folder, one beside it.
        server.startUpload(key: "tidy/sub/orphan.mov")
        server.startUpload(key: "other/not-ours.mov")

        let doctor = try await FerryProcess.run(["doctor", "--cleanup", "--older-than", "0", "--state", work.state, "--json"],
                                                in: work.directory.path, environment: server.environment)
        #expect(doctor.status == 0, "\(doctor.diagnostics)")
        let cleanup = try #require(doctor.events(named: "cleanup").first, "\(doctor.diagnostics)")
        #expect(cleanup["aborted_uploads"] as? [String] == ["sub/orphan.mov"], "\(doctor.diagnostics)")
        #expect(cleanup["kept_for_resume"] as? Int == 1)
        #expect(server.unfinishedUploads(prefix: "tidy/") == ["tidy/VID_0001.mov"])
        #expect(server.unfinishedUploads(prefix: "other/") == ["other/not-ours.mov"])

        // Another abandoned one appears; the next push aborts it by age and resumes the video.
        server.startUpload(key: "tidy/later.mov")
        let resumed = try await FerryProcess.run(["push", "videos", "--state", work.state, "--json"], in: work.directory.path,
                                                 environment: server.environment)
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        let event = try #require(resumed.events(named: "transferred").first)
        #expect((event["resumed_from"] as? NSNumber)?.intValue ?? 0 == held.count * (5 << 20), "\(event)")
        #expect(server.unfinishedUploads(prefix: "tidy/").isEmpty)
        #expect(server.unfinishedUploads(prefix: "other/") == ["other/not-ours.mov"])
    }
}
