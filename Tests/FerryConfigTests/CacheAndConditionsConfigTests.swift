@testable import FerryConfig
import Testing

/// `local_limit:` and `when:` as config.yml spells them, and their errors with line and column.
@Suite("config: local_limit and when")
struct CacheAndConditionsConfigTests {
    static func folder(mode: String = "pull", _ extra: String) -> String {
        "remotes:\n  r: {type: local, path: /r}\nfolders:\n  f:\n    path: /f\n    remote: r\n    mode: \(mode)\n" + extra
    }

    /// A pull or sync trusts the change markers between full listings, as a push trusts
    /// its journal: `remote_check` sets how long for every mode.
    @Test("remote_check is read on pull and sync folders (the defaults: FolderPairDefaultsTests)")
    func remoteCheckOnPullAndSync() throws {
        let config = try ConfigLoaderTests.parse(Self.folder("    remote_check: 0s\n"))
        #expect(config.folders.first?.remoteCheck == .zero)
    }

    @Test("a cache budget and run conditions are read with their defaults")
    func reads() throws {
        let config = try ConfigLoaderTests.parse(Self.folder("""
                local_limit: { max_size: 20G, max_files: 5000, evict: least-recently-used, keep_queues: [thumbnails] }
                when: { network: unmetered, power: ac, min_battery: 30% }

            """))
        let folder = try #require(config.folder(named: "f"))
        #expect(folder.localLimit == LocalLimit(maxBytes: 20 << 30, maxFiles: 5000, order: .leastRecentlyUsed,
                                                keepQueues: ["thumbnails"]))
        #expect(folder.conditions == RunConditions(network: .unmetered, power: .ac, minBattery: 30))
        let plain = try #require(try ConfigLoaderTests.parse(Self.folder("")).folder(named: "f"))
        #expect(plain.localLimit == nil && plain.conditions.isEmpty)
        let onlyFiles = try #require(try ConfigLoaderTests.parse(Self.folder(mode: "sync", "    local_limit: {max_files: 3}\n"))
            .folder(named: "f"))
        #expect(onlyFiles.localLimit == LocalLimit(maxFiles: 3))
        let command = try #require(try ConfigLoaderTests.parse(Self.folder("    when: {network_command: 'test -e /x'}\n"))
            .folder(named: "f"))
        #expect(command.conditions.networkCommand == "test -e /x" && command.conditions.needsNetwork)
    }

    @Test("watch.condition_interval is read")
    func interval() throws {
        let config = try ConfigLoaderTests.parse("watch:\n  condition_interval: 5s\n")
        #expect(config.watch.conditionInterval == .seconds(5))
    }

    static let errors: [ConfigErrorCase] = [
        ConfigErrorCase(name: "a cache budget on a push folder", yaml: folder(mode: "push", "    local_limit: {max_size: 1G}\n"),
                        line: 8, column: 5, mentions: "pull and sync folders", key: "folders.f.local_limit"),
        ConfigErrorCase(name: "a cache budget with no bound", yaml: folder("    local_limit: {evict: oldest}\n"),
                        line: 8, column: 18, mentions: "max_size or max_files", key: "folders.f.local_limit"),
        ConfigErrorCase(name: "an unknown eviction order", yaml: folder("    local_limit: {max_files: 3, evict: newest}\n"),
                        line: 8, column: 40, mentions: "unknown eviction order 'newest'", key: "folders.f.local_limit.evict"),
        ConfigErrorCase(name: "a kept queue that does not exist", yaml: folder("    local_limit: {max_files: 3, keep_queues: [thumbs]}\n"),
                        line: 8, column: 47, mentions: "no queue named 'thumbs'", key: "folders.f.local_limit.keep_queues"),
        ConfigErrorCase(name: "a size that is not one", yaml: folder("    local_limit: {max_size: big}\n"),
                        line: 8, column: 29, mentions: "expected a size", key: "folders.f.local_limit.max_size"),
        ConfigErrorCase(name: "an unknown key in local_limit", yaml: folder("    local_limit: {max_sise: 1G}\n"),
                        line: 8, column: 19, mentions: "did you mean 'max_size'", key: "folders.f.local_limit.max_sise"),
        ConfigErrorCase(name: "an unknown network condition", yaml: folder("    when: {network: wifi}\n"),
                        line: 8, column: 21, mentions: "unknown network condition 'wifi'", key: "folders.f.when.network"),
        ConfigErrorCase(name: "an unknown power condition", yaml: folder("    when: {power: battery}\n"),
                        line: 8, column: 19, mentions: "unknown power condition 'battery'", key: "folders.f.when.power"),
        ConfigErrorCase(name: "a battery level over 100%", yaml: folder("    when: {min_battery: 130%}\n"),
                        line: 8, column: 25, mentions: "percentage from 0% to 100%", key: "folders.f.when.min_battery"),
        ConfigErrorCase(name: "an unknown key in when", yaml: folder("    when: {metered: no}\n"),
                        line: 8, column: 12, mentions: "unknown key", key: "folders.f.when.metered"),
        ConfigErrorCase(name: "a remote check that is not a duration", yaml: folder(mode: "push", "    remote_check: daily\n"),
                        line: 8, column: 19, mentions: "expected a duration", key: "folders.f.remote_check"),
    ]

    @Test("each problem is reported at the offending node", arguments: errors)
    func errorLocation(_ row: ConfigErrorCase) throws {
        let error = try #require(throws: ConfigError.self) { try ConfigLoaderTests.parse(row.yaml) }
        #expect(error.line == row.line && error.column == row.column, "at \(error.line ?? 0):\(error.column ?? 0) \(row.name)")
        #expect(error.key == row.key)
        #expect(error.message.contains(row.mentions), "message: \(error.message)")
    }
}
