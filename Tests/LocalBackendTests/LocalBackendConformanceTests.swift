import FerryPluginAPI
import FerryTestSupport
import LocalBackend
import Testing

@Suite("LocalBackend conformance")
struct LocalBackendConformanceTests {
    @Test(arguments: BackendConformance.checks)
    func conformance(_ check: BackendConformance.Check) async throws {
        let root = TemporaryDirectory("ferry-local-root")
        let scratch = TemporaryDirectory("ferry-local-scratch")
        try await check.run(LocalBackend(root: root.path), scratch.path)
    }
}
