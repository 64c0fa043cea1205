@testable import FerryConfig
@testable import FerryCore
@testable import ferry
import FerryTestSupport
import Foundation
import Testing

/// docs/config.md against the config reader: every key the reader takes is documented in
/// its section's table, and every documented key is one the reader takes.
@Suite struct ConfigReferenceTests {
    static let document: String = {
        (try? String(contentsOfFile: TestServer.repositoryRoot + "/docs/config.md", encoding: .utf8)) ?? ""
    }()

    /// The keys of the table under the heading `heading` (up to the next heading).
    static func documentedKeys(under heading: String) -> [String]? {
        let lines = document.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: heading) else { return nil }
        var keys: [String] = []
        for line in lines[(start + 1)...] {
            if line.hasPrefix("#") { break }
            guard line.hasPrefix("| `"), let end = line.dropFirst(3).firstIndex(of: "`") else { continue }
            keys.append(String(line[line.index(line.startIndex, offsetBy: 3)..<end]))
        }
        return keys
    }

    @Test(arguments: ConfigReader.schema.map(\.section))
    func sectionMatchesTheReader(section: String) throws {
        let documented = try #require(Self.documentedKeys(under: "### `\(section)`"), "docs/config.md has no section `\(section)`")
        let read = ConfigReader.keys(section)
        for key in read { #expect(documented.contains(key), "`\(section).\(key)` is read but not in docs/config.md") }
        for key in documented { #expect(read.contains(key), "`\(section).\(key)` is documented but not read") }
    }

    @Test(arguments: BuiltinBackends.registry.plugins.map(\.type))
    func remoteTypeMatchesItsOptions(type: String) throws {
        let plugin = try #require(BuiltinBackends.registry.plugin(forType: type))
        let documented = try #require(Self.documentedKeys(under: "#### `remotes.NAME` (type: \(type))"),
                                      "docs/config.md has no section for remotes of type \(type)")
        let options = ["type"] + plugin.options.map(\.name)
        for key in options { #expect(documented.contains(key), "\(type) remote key `\(key)` not in docs/config.md") }
        for key in documented { #expect(options.contains(key), "\(type) remote key `\(key)` documented but not taken") }
    }

    @Test func pluginFamiliesAreDocumented() {
        for family in BuiltinBackends.registry.families {
            #expect(Self.documentedKeys(under: "#### `remotes.NAME` (type: \(family.prefix)NAME)") != nil)
        }
    }

    /// `ferry init` writes a file the reader takes, every key of which is documented.
    @Test func initWritesACommentedConfigTheReaderTakes() async throws {
        let work = Workspace()
        let result = try await work.ferry(["init"])
        #expect(result.status == 0, "\(result.diagnostics)")
        let path = work.directory.child("config.yml")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("#") }.count > 10, "not commented")
        let config = try ConfigLoader(registry: BuiltinBackends.registry).load(file: path)
        #expect(!config.folders.isEmpty && !config.remotes.isEmpty)
        let again = try await work.ferry(["init"])
        #expect(again.status == 2 && again.standardError.contains("already exists"), "\(again.diagnostics)")
    }
}
