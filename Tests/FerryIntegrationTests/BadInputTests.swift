import FerryTestSupport
import Foundation
import Testing

@Suite("bad configuration and usage", .integration)
struct BadInputTests {
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var yaml: String
        var location: String
        var mentions: String
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "unknown key", yaml: "remotes:\n  nas:\n    type: local\n    pth: /x\n", location: "config.yml:4:5:", mentions: "pth"),
        Case(name: "unknown top-level key", yaml: "state:\n  path: s\nqueus: []\n", location: "config.yml:3:1:", mentions: "queus"),
        Case(name: "wrong type", yaml: "transfers:\n  max: lots\n", location: "config.yml:2:8:", mentions: "whole number"),
        Case(name: "missing remote", yaml: "remotes:\n  nas:\n    type: local\n    path: /x\nfolders:\n  photos:\n    path: p\n    remote: cloud\n",
             location: "config.yml:8:13:", mentions: "no remote named 'cloud'"),
        Case(name: "missing required key", yaml: "remotes:\n  nas:\n    path: /x\n", location: "config.yml:3:5:", mentions: "type"),
        Case(name: "broken YAML", yaml: "remotes: [\n", location: "config.yml:2:1:", mentions: "YAML"),
        Case(name: "a word a WebDAV option does not take",
             yaml: "remotes:\n  nas:\n    type: webdav\n    url: http://127.0.0.1:9/dav\n    direct_put: always\n",
             location: "config.yml:5:17:", mentions: "unknown value 'always' (expected auto or off)"),
    ]

    @Test("exit 2, one line with line:column, no journal created or changed", arguments: cases)
    func badConfig(_ testCase: Case) async throws {
        let work = Workspace()
        try Data(testCase.yaml.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        try TreeGenerator.write(at: work.source + "/a.jpg", size: 10, seed: 1)
        let run = try await work.ferry(["push", work.source, "--to", work.destination, "--state", work.state])
        #expect(run.status == 2, "\(run.diagnostics)")
        let lines = run.standardError.split(separator: "\n")
        #expect(lines.count == 1, "\(run.standardError)")
        #expect(run.standardError.contains(testCase.location), "\(run.standardError)")
        #expect(run.standardError.contains(testCase.mentions), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: work.state))
        #expect(!FileManager.default.fileExists(atPath: work.destination))
    }

    @Test("a bad config leaves an existing journal untouched")
    func existingJournalUntouched() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/a.jpg", size: 10, seed: 1)
        #expect(try await work.push().status == 0)
        let journal = work.state + "/journal.sqlite"
        let before = try FileManager.default.attributesOfItem(atPath: journal)
        try Data("transfers:\n  max: 0\n".utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        try TreeGenerator.write(at: work.source + "/b.jpg", size: 10, seed: 2)
        let run = try await work.ferry(["push", work.source, "--to", work.destination, "--state", work.state])
        #expect(run.status == 2, "\(run.diagnostics)")
        let after = try FileManager.default.attributesOfItem(atPath: journal)
        #expect(before[.modificationDate] as? Date == after[.modificationDate] as? Date)
        #expect(before[.size] as? NSNumber == after[.size] as? NSNumber)
    }

    @Test("unknown folder and unknown option exit 2")
    func usageErrors() async throws {
        let work = Workspace()
        let unknownFolder = try await work.ferry(["push", "holidays"])
        #expect(unknownFolder.status == 2)
        #expect(unknownFolder.standardError.contains("no configured folder named 'holidays'"))
        let unknownOption = try await work.ferry(["push", "--frobnicate"])
        #expect(unknownOption.status == 2)
        let missingConfig = try await work.ferry(["push", "--config", "nope.yml"])
        #expect(missingConfig.status == 2)
        #expect(missingConfig.standardError.contains("nope.yml"))
    }

    @Test("--version --libraries names the linked libcurl and libarchive")
    func versionShowsLibraries() async throws {
        let work = Workspace()
        let run = try await work.ferry(["--version", "--libraries"])
        #expect(run.status == 0)
        #expect(run.standardOutput.contains("libcurl/"))
        #expect(run.standardOutput.contains("libarchive 3"))
    }

    @Test("-v and --verbose after a subcommand reach it: each uploaded file is listed")
    func verboseReachesSubcommands() async throws {
        for flag in ["-v", "--verbose"] {
            let work = Workspace()
            try TreeGenerator.write(at: work.source + "/IMG_1.jpg", size: 10, seed: 1)
            let run = try await work.ferry(["push", work.source, "--to", work.destination, "--state", work.state, flag])
            #expect(run.status == 0, "\(run.diagnostics)")
            #expect(run.standardOutput.contains("uploaded IMG_1.jpg"), "\(flag): \(run.diagnostics)")
        }
    }
}

@Suite("ferry ls", .integration)
struct ListCommandTests {
    @Test("lists a local remote, recursively, and as JSON")
    func listsLocalRemote() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.destination + "/2024/IMG_1.jpg", size: 10, seed: 1)
        try TreeGenerator.write(at: work.destination + "/top.gpx", size: 20, seed: 2)
        try TreeGenerator.write(at: work.destination + "/2024/.IMG_2.jpg.ferry-part", size: 5, seed: 3)
        let flat = try await work.ferry(["ls", work.destination])
        #expect(flat.status == 0, "\(flat.diagnostics)")
        #expect(flat.standardOutput.contains("2024/"))
        #expect(flat.standardOutput.contains("top.gpx"))
        let tree = try await work.ferry(["ls", "-R", work.destination, "--json"])
        #expect(tree.status == 0, "\(tree.diagnostics)")
        #expect(Set(tree.events.compactMap { $0["path"] as? String }) == ["2024/IMG_1.jpg", "top.gpx"])
        let missing = try await work.ferry(["ls", "nosuchremote:photos"])
        #expect(missing.status == 2)
    }
}
