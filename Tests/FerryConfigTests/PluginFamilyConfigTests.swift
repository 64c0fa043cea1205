import FerryPluginAPI
import Testing

@testable import FerryConfig

/// Remote types resolved by prefix (`exec:NAME`) and remotes whose plugin takes keys Ferry
/// cannot know in advance.
@Suite("Config with plugin families")
struct PluginFamilyConfigTests {
    static let family = BackendPluginFamily(prefix: "exec:", summary: "external") { name in
        guard name != "bad" else { return nil }
        return BackendPlugin(
            type: "exec:" + name, summary: "", options: [.init("path", .path, summary: ""), .init("concurrency", .integer, summary: "")],
            capabilities: BackendCapabilities(), acceptsOtherOptions: true,
            make: { _ throws(BackendError) -> any Backend in throw BackendError(.unsupported, "not in this test") })
    }

    static let loader = ConfigLoader(registry: BackendRegistry([], families: [family]))

    @Test("an exec: remote takes its declared options typed, and any other key as text for the plugin")
    func otherOptions() throws {
        let config = try Self.loader.parse("""
            remotes:
              vault:
                type: exec:cas
                path: store
                concurrency: 2
                bucket: photos
            """, file: "config.yml", baseDirectory: "/base")
        let remote = try #require(config.remote(named: "vault"))
        #expect(remote.type == "exec:cas")
        #expect(remote.options == ["path": "/base/store", "concurrency": "2", "bucket": "photos"])
    }

    @Test("declared options keep their checks; a family that does not know the name is an unknown type")
    func checks() {
        #expect(throws: ConfigError.self) {
            try Self.loader.parse("remotes:\n  v:\n    type: exec:cas\n    concurrency: many\n", file: "config.yml", baseDirectory: "/")
        }
        do {
            _ = try Self.loader.parse("remotes:\n  v:\n    type: exec:bad\n", file: "config.yml", baseDirectory: "/")
            Issue.record("exec:bad loaded")
        } catch {
            #expect(error.description.contains("unknown remote type 'exec:bad'"))
            #expect(error.description.contains("exec:NAME"))
            #expect(error.line == 3)
        }
    }

    @Test("a mapping is not an option value")
    func nested() {
        #expect(throws: ConfigError.self) {
            try Self.loader.parse("remotes:\n  v:\n    type: exec:cas\n    extra: {a: 1}\n", file: "config.yml", baseDirectory: "/")
        }
    }
}
