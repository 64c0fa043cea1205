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
        do {
            try await check.run(LocalBackend(root: root.path), scratch.path)
        } catch let notApplicable as BackendConformance.NotApplicable {
            try Test.cancel(Comment(rawValue: notApplicable.reason))
        }
    }
}
