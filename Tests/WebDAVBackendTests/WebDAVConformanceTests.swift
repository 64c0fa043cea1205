import CurlTransport
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

@testable import WebDAVBackend

/// Every conformance check against a real nginx and a real Apache, each on a fresh folder.
@Suite("WebDAV conformance against real servers", .serialized, .integration)
struct WebDAVConformanceTests {
    static let servers: [TestServer.Kind] = [.nginx, .apache]

    @Test(arguments: servers)
    func conformance(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        var failures: [String] = []
        for (index, check) in BackendConformance.checks.enumerated() {
            let scratch = TemporaryDirectory("ferry-dav-scratch")
            let backend = try WebDAVBackend(baseURL: server.url("/dav/check\(index)/"), settings: CurlTransportSettings())
            try await backend.makeDirectory(.root)
            do {
                try await check.run(backend, scratch.path)
            } catch is BackendConformance.NotApplicable {
                // Does not apply to this server: neither passed nor failed.
            } catch {
                failures.append("\(check.name): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(kind): \(failures.joined(separator: "\n"))")
    }
}
