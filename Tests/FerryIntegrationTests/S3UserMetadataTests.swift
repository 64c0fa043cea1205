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

    @Test("a pull from a store that drops user metadata restores the files' times from the remote catalog; one replaced since gets no stale time")
    func timesKeptInCatalog() async throws {
        let server = try await S3TestServer(.seaweedfs)
        let proxy = try await FaultProxy(upstream: server.endpoint, share: 0, options: ["--keep-host", "--drop-metadata"])
        var dropping = server.environment
        dropping["AWS_ENDPOINT_URL_S3"] = proxy.origin
        let work = Workspace()
        for index in 0..<3 {
            try TreeGenerator.write(at: work.source + "/DCIM/IMG_\(index).jpg", size: 100 + index, seed: UInt64(index + 1),
                                    modified: 1_600_000_000.5 + Double(index) * 86_400)
        }
        let remote = "s3://\(S3TestServer.bucket)/phone"
        let push = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state], environment: dropping)
        #expect(push.status == 0, "\(push.diagnostics)")

        // Another machine, a fresh state: every file comes with the time it had where it was pushed from.
        let pull = try await work.ferry(["pull", work.destination, "--from", remote, "--state", work.directory.child("laptop"),
                                         "--json"], environment: dropping)
        #expect(pull.status == 0 && pull.int("downloaded") == 3, "\(pull.diagnostics)")
        let differences = try TreeComparison.differences(work.source, work.destination, compareModificationTimes: true)
        #expect(differences.isEmpty, "\(differences)")
        let again = try await work.ferry(["pull", work.destination, "--from", remote, "--state", work.directory.child("laptop"),
                                          "--json"], environment: dropping)
        #expect(again.status == 0 && again.int("downloaded") == 0, "\(again.diagnostics)")

        // Another tool replaces one file on the store: its kept time belongs to the old version.
        let other = work.directory.child("other")
        try TreeGenerator.write(at: other + "/DCIM/IMG_1.jpg", size: 500, seed: 9, modified: 1_650_000_000)
        let overwrite = try await work.ferry(["push", other, "--to", remote, "--state", work.directory.child("other-state")],
                                             environment: server.environment)
        #expect(overwrite.status == 0, "\(overwrite.diagnostics)")
        let fresh = work.directory.child("fresh")
        let third = try await work.ferry(["pull", fresh, "--from", remote, "--state", work.directory.child("fresh-state"), "--json"],
                                         environment: dropping)
        #expect(third.status == 0 && third.int("downloaded") == 3, "\(third.diagnostics)")
        let files = try TreeComparison.files(in: fresh)
        #expect(files["DCIM/IMG_0.jpg"]?.modifiedNanos == 1_600_000_000_500_000_000)
        #expect(files["DCIM/IMG_1.jpg"]?.size == 500)
        #expect(files["DCIM/IMG_1.jpg"]?.modifiedNanos != 1_600_086_400_500_000_000, "the replaced file got the old version's time")
        withExtendedLifetime((server, proxy)) {}
    }
}
