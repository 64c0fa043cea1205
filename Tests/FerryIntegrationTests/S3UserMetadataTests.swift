import FerryTestSupport
import Foundation
import Testing

/// An S3-compatible gateway that keeps no user metadata loses every file's modification
/// time without an error. Ferry reads the first upload back, says so once, and the probe
/// no longer claims `mtime` (issue 49). The gateway is moto behind a proxy that leaves
/// `x-amz-meta-*` out of every answer: no real store at hand behaves so.
@Suite("S3: a store that drops user metadata", .integration)
struct S3UserMetadataTests {
    @Test("the probe and the first push say the times are lost, once; a store that keeps them says nothing")
    func droppedMetadataIsSaid() async throws {
        let server = try await S3TestServer(.moto)
        let proxy = try await FaultProxy(upstream: server.endpoint, share: 0, options: ["--keep-host", "--drop-metadata"])
        var dropping = server.environment
        dropping["AWS_ENDPOINT_URL_S3"] = proxy.origin
        let work = Workspace()
        for index in 0..<3 {
            try TreeGenerator.write(at: work.source + "/DCIM/IMG_\(index).jpg", size: 100, seed: UInt64(index + 1), modified: 1_700_000_000)
        }
        let remote = "s3://\(S3TestServer.bucket)/phone"

        let probe = try await work.ferry(["plugins", "--probe", remote], environment: dropping)
        #expect(probe.status == 0, "\(probe.diagnostics)")
        #expect(probe.standardOutput.contains("user metadata kept (x-amz-meta-mtime): no"), "\(probe.diagnostics)")
        let capabilities = probe.standardOutput.split(separator: "\n").first { $0.contains("capabilities:") } ?? ""
        #expect(!capabilities.contains("mtime"), "\(capabilities)")

        let push = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state], environment: dropping)
        #expect(push.status == 0, "\(push.diagnostics)")
        let warnings = push.standardError.components(separatedBy: "dropped the modification time").count - 1
        #expect(warnings == 1, "\(push.diagnostics)")

        // Straight to moto, which keeps metadata: no warning, `mtime` claimed.
        let direct = try await work.ferry(["plugins", "--probe", remote], environment: server.environment)
        #expect(direct.standardOutput.contains("user metadata kept (x-amz-meta-mtime): yes"), "\(direct.diagnostics)")
        try TreeGenerator.write(at: work.source + "/DCIM/IMG_9.jpg", size: 100, seed: 9, modified: 1_700_000_000)
        let quiet = try await work.ferry(["push", work.source, "--to", remote, "--state", work.directory.child("other-state")],
                                         environment: server.environment)
        #expect(quiet.status == 0, "\(quiet.diagnostics)")
        #expect(!quiet.standardError.contains("dropped the modification time"), "\(quiet.diagnostics)")
        withExtendedLifetime((server, proxy)) {}
    }
}
