import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

@testable import S3Backend

/// Every conformance check against a real SeaweedFS (`weed mini`, which checks signatures),
/// moto, and a SeaweedFS cluster of separate processes, each check under a fresh prefix of
/// the test bucket.
@Suite("S3 conformance against real stores", .serialized, .integration)
struct S3ConformanceTests {
    @Test(arguments: S3TestServer.Kind.singleProcess + [.seaweedfsCluster])
    func conformance(_ kind: S3TestServer.Kind) async throws {
        let server = try await S3TestServer(kind)
        var failures: [String] = []
        var skipped: [String] = []
        for (index, check) in BackendConformance.checks.enumerated() {
            let scratch = TemporaryDirectory("ferry-s3-scratch")
            let backend = try server.backend(prefix: "check\(index)")
            do {
                try await check.run(backend, scratch.path)
            } catch is BackendConformance.NotApplicable {
                skipped.append(check.name)
            } catch {
                failures.append("\(check.name): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(kind): \(failures.joined(separator: "\n"))")
        // The backend claims every capability the checks ask about: none may be skipped.
        #expect(skipped.isEmpty, "\(kind) skipped: \(skipped)")
    }
}
