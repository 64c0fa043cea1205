import ExecBackend
import FerryPluginAPI
import FerryTestSupport
import Testing

/// The example plugin (Python, Plugins/ContentStorePlugin) through the exec backend passes
/// the same checks as the built-in backends.
@Suite("exec:cas conformance", .integration)
struct ContentStoreConformanceTests {
    @Test(arguments: BackendConformance.checks)
    func conformance(_ check: BackendConformance.Check) async throws {
        let store = TemporaryDirectory("ferry-cas-store")
        let scratch = TemporaryDirectory("ferry-cas-scratch")
        let backend = TestPlugins.contentStoreBackend(in: store)
        _ = try await backend.discoverCapabilities()
        do {
            try await check.run(backend, scratch.path)
        } catch let notApplicable as BackendConformance.NotApplicable {
            try Test.cancel(Comment(rawValue: notApplicable.reason))
        }
    }

    @Test("ConformanceRun gives each check a folder of its own, and removes them")
    func conformanceRun() async throws {
        let store = TemporaryDirectory("ferry-cas-store")
        let backend = TestPlugins.contentStoreBackend(in: store)
        // A few checks that leave files and folders behind; the full list runs above.
        let quick = BackendConformance.checks.filter { $0.name.hasPrefix("an empty root") || $0.name.hasPrefix("upload creates")
            || $0.name.hasPrefix("listTree") || $0.name.hasPrefix("move refuses") }
        let outcomes = await ConformanceRun(backend: backend, folder: try RelativePath("suite")).run(quick)
        #expect(quick.count == 4 && outcomes.count == quick.count)
        #expect(outcomes.filter { $0.failure != nil }.map { "\($0.check): \($0.failure ?? "")" } == [])
        #expect(try await backend.list(.root).isEmpty)
    }

    @Test("many requests run at once in one plugin process")
    func multiplexed() async throws {
        let store = TemporaryDirectory("ferry-cas-store")
        let scratch = TemporaryDirectory("ferry-cas-scratch")
        let backend = TestPlugins.contentStoreBackend(in: store)
        var requests: [UploadRequest] = []
        for index in 0..<64 {
            requests.append(try TestPlugins.source(scratch, name: "f\(index)", size: 1000 + index, seed: UInt64(index),
                                                   to: "many/d\(index % 4)/IMG_\(index).jpg"))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for request in requests {
                group.addTask { _ = try await backend.upload(request, observer: NullTransferObserver()) }
            }
            try await group.waitForAll()
        }
        let tree = try await backend.listTree(try RelativePath("many"))
        #expect(tree.count == 64)
        #expect(await backend.restarts == 0)
        #expect(try await backend.pluginHello().maxConcurrency == 8)
    }
}
