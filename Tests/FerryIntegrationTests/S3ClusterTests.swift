import FerryTestSupport
import Foundation
import Testing

/// Ferry against a distributed store: SeaweedFS as separate processes (a master, two
/// volume servers keeping every object on both, a filer with its S3 gateway).
@Suite("push and pull through a SeaweedFS cluster", .integration)
struct S3ClusterTests {
    @Test("push, no-op push, pull into a fresh state: identical bytes and times, and every volume on both servers")
    func pushPushPull() async throws {
        let server = try await S3TestServer(.seaweedfsCluster)
        let work = Workspace()
        let written = try await TreeGenerator.generate(at: work.source, .init(fileCount: 150, largeFileSizes: [12 << 20], seed: 16))
        try TreeGenerator.write(at: work.source + "/VID_0002.mov", size: 3 * (5 << 20) + 1234, seed: 17, modified: 1_700_000_000.75)
        let config = """
            remotes:
              cluster:
                type: s3
                bucket: \(S3TestServer.bucket)
                prefix: devices/phone
                endpoint: \(server.endpoint)
                multipart_threshold: 5M
                multipart_part_size: 5M
            folders:
              phone:
                path: src
                remote: cluster
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let environment = server.environment

        let first = try await work.ferry(["push", "phone", "--state", work.state, "--json"], environment: environment)
        #expect(first.status == 0, "\(first.diagnostics)")
        #expect(first.int("uploaded") == written.count + 1)

        let second = try await work.ferry(["push", "phone", "--state", work.state, "--json"], environment: environment)
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(second.int("uploaded") == 0)

        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", "cluster", "--state", work.directory.child("fresh-state"), "--json"],
                                        environment: environment)
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == written.count + 1)
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: true) == [])

        // Replication 001: the objects live on both volume servers, volume for volume.
        let volumes = server.volumesByServer()
        #expect(volumes.count == 2, "\(volumes)")
        #expect(Set(volumes.values).count == 1 && volumes.values.allSatisfy { !$0.isEmpty }, "\(volumes)")
    }
}
