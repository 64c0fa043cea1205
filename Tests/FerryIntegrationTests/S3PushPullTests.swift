import FerryTestSupport
import Foundation
import Testing

@Suite("push and pull through real S3 stores", .integration)
struct S3PushPullTests {
    @Test("push to s3://, push again (nothing sent), pull into an empty folder with a fresh state: identical bytes and times",
          arguments: S3TestServer.Kind.singleProcess)
    func pushPushPull(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        let work = Workspace()
        let written = try await TreeGenerator.generate(at: work.source, .init(fileCount: 120, largeFileSizes: [9 << 20], seed: 15))
        let remote = "s3://\(S3TestServer.bucket)/photos/phone one"
        let environment = server.environment

        let first = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"], environment: environment)
        #expect(first.status == 0, "\(first.diagnostics)")
        #expect(first.int("uploaded") == written.count)

        let second = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"], environment: environment)
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(second.int("uploaded") == 0)
        #expect(second.int("skipped") == written.count)

        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", remote, "--state", work.directory.child("fresh-state"), "--json"],
                                        environment: environment)
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == written.count)
        // The store keeps each file's time in x-amz-meta-mtime: bytes and times match.
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: true) == [])
    }

    @Test("a wrong secret fails at once with 'check the secret key', never printing it")
    func wrongSecret() async throws {
        let server = try await S3TestServer(.seaweedfs)
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/IMG_1.jpg", size: 1000, seed: 1)
        var environment = server.environment
        environment["AWS_SECRET_ACCESS_KEY"] = "not-the-secret-key"
        let run = try await work.ferry(["push", work.source, "--to", "s3://\(S3TestServer.bucket)/x", "--state", work.state, "--json"],
                                       environment: environment)
        #expect(run.status != 0, "\(run.diagnostics)")
        let output = run.standardError + run.standardOutput
        #expect(output.contains("check the secret key"), "\(output)")
        #expect(!output.contains("not-the-secret-key"))
        #expect(run.events(named: "retrying").isEmpty)
    }
}
