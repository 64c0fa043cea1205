import CurlTransport
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

@testable import HTTPBackend

/// Every conformance check against real servers, each on a fresh folder, in the two ways
/// an HTTP remote works: PUT with MOVE and a JSON index (nginx `/files/`), and multipart
/// POST with an HTML index and no MOVE (`upload-server.py`).
@Suite("HTTP conformance against real servers", .serialized, .integration)
struct HTTPConformanceTests {
    enum Setup: String, CaseIterable, CustomStringConvertible {
        /// nginx `/files/`: PUT + MOVE (configured), index detected (JSON).
        case nginxPutMove
        /// upload-server.py: POST multipart, HTML index, rename probed (it has no MOVE).
        case uploadServerPost

        var description: String { rawValue }
        var server: TestServer.Kind { self == .nginxPutMove ? .nginx : .upload }

        func backend(on server: TestServer, folder: String) throws -> HTTPBackend {
            switch self {
            case .nginxPutMove:
                return try HTTPBackend(baseURL: server.url("/files/\(folder)/"),
                                       options: HTTPRemoteOptions(listing: .auto, upload: .put, rename: .move),
                                       settings: CurlTransportSettings())
            case .uploadServerPost:
                return try HTTPBackend(baseURL: server.url("/\(folder)/"),
                                       options: HTTPRemoteOptions(listing: .html,
                                                                  upload: .post(endpoint: server.url("/upload"), field: "file"),
                                                                  rename: .auto),
                                       settings: CurlTransportSettings())
            }
        }
    }

    @Test(arguments: Setup.allCases)
    func conformance(_ setup: Setup) async throws {
        let server = try await TestServer(setup.server)
        var failures: [String] = []
        for (index, check) in BackendConformance.checks.enumerated() {
            let scratch = TemporaryDirectory("ferry-http-scratch")
            let backend = try setup.backend(on: server, folder: "check\(index)")
            try await backend.makeDirectory(.root)
            do {
                try await check.run(backend, scratch.path)
            } catch is BackendConformance.NotApplicable {
                // Does not apply to this server: neither passed nor failed.
            } catch {
                failures.append("\(check.name): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(setup): \(failures.joined(separator: "\n"))")
    }
}
