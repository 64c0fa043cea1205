import FerryPluginAPI
import FerryTestSupport
import Testing

/// The in-memory backend stands in for a server in the engine tests and the several-devices
/// simulation; what those tests prove holds only as far as it behaves like the real ones.
@Suite("InMemoryBackend conformance")
struct InMemoryBackendConformanceTests {
    @Test(arguments: BackendConformance.checks)
    func conformance(_ check: BackendConformance.Check) async throws {
        let scratch = TemporaryDirectory("ferry-memory-scratch")
        do {
            try await check.run(InMemoryBackend(), scratch.path)
        } catch let notApplicable as BackendConformance.NotApplicable {
            try Test.cancel(Comment(rawValue: notApplicable.reason))
        }
    }
}
