@testable import ferry
import FerryTestSupport
import Foundation
import Testing

/// The README's "Using it" examples, run in order as a person would, against local folders:
/// HOME is a scratch folder with ~/DCIM, and config.yml has a `local` remote `nas`, a push
/// folder `sample` and a sync folder `phone`. Lines that need a server, run until stopped,
/// or only show a pattern (`[...]`, `a|b`) are left out.
@Suite struct ReadmeExamplesTests {
    static func examples() throws -> [String] {
        let readme = try String(contentsOfFile: TestServer.repositoryRoot + "/README.md", encoding: .utf8)
        guard let section = readme.components(separatedBy: "## Using it").dropFirst().first,
              let block = section.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first else {
            return []
        }
        return block.split(separator: "\n").map { line in
            String(line.split(separator: "#", maxSplits: 1).first ?? "").trimmingCharacters(in: .whitespaces)
        }.filter { $0.hasPrefix("ferry ") }
    }

    static func needsNoServer(_ command: String) -> Bool {
        let markers = ["dav://", "http://", "https://", "[", "|", "ferry watch", "ferry daemon", "plugin-test"]
        return !markers.contains { command.contains($0) }
    }

    @Test func everyExampleThatNeedsNoServerRuns() async throws {
        let examples = try Self.examples()
        #expect(examples.count > 20, "the README's Using it block was not found")
        let work = Workspace()
        let home = work.directory.child("home")
        let fileManager = FileManager.default
        for folder in ["home/DCIM/2024", "home/phone", "sample/.thumbnails", "nas"] {
            try fileManager.createDirectory(atPath: work.directory.child(folder), withIntermediateDirectories: true)
        }
        for (path, text) in [("home/DCIM/IMG_1.jpg", "one"), ("home/DCIM/2024/IMG_2.jpg", "two"), ("home/phone/p.jpg", "p"),
                             ("sample/a.jpg", "a"), ("sample/.thumbnails/a.jpg", "t")] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: work.directory.child(path)))
        }
        let config = """
            state:
              path: ./state
            remotes:
              nas:
                type: local
                path: ./nas
            folders:
              sample:
                path: ./sample
                remote: nas
                remote_path: sample
              phone:
                path: ~/phone
                remote: nas
                remote_path: phone
                mode: sync

            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        var ran = 0
        for command in examples where Self.needsNoServer(command) {
            let result = try await FerryProcess.run(
                ["-c", "exec " + command.replacingOccurrences(of: "ferry ", with: "\"$FERRY\" ", options: .anchored)],
                in: work.directory.path, environment: ["HOME": home, "FERRY": FerryProcess.executable],
                executable: "/bin/sh")
            #expect(result.status == 0, "README example failed: \(command)\n\(result.diagnostics)")
            ran += 1
        }
        #expect(ran >= 20)
    }

    /// The man page that `make install` installs names every command.
    @Test func manPageListsEveryCommand() throws {
        let page = try String(contentsOfFile: TestServer.repositoryRoot + "/contrib/ferry.1", encoding: .utf8)
        for command in Ferry.configuration.subcommands.map({ $0._commandName }) {
            #expect(page.contains(".B \(command)"), "contrib/ferry.1 does not describe ferry \(command)")
        }
    }
}
