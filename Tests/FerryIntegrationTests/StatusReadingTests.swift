import FerryTestSupport
import Foundation
import Testing

/// What `ferry status`, `--dry-run`, `forget` and `resolve` print for a person, on a
/// configured folder (`nas:phone`) and an ad-hoc pair, against local folders.
@Suite struct StatusReadingTests {
    /// A config with a local remote `nas` and a folder `photos` (./phone → nas:phone).
    private func setUp(mode: String = "push", files: [String] = ["DCIM/a.jpg", "DCIM/b.jpg", "DCIM/c.jpg"]) throws -> Workspace {
        let work = Workspace()
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: work.directory.child("phone/DCIM"), withIntermediateDirectories: true)
        try fileManager.createDirectory(atPath: work.directory.child("backup"), withIntermediateDirectories: true)
        for file in files { try Data("x\(file)".utf8).write(to: URL(fileURLWithPath: work.directory.child("phone/" + file))) }
        let config = """
            state:
              path: ./state
            remotes:
              nas:
                type: local
                path: ./backup
            folders:
              photos:
                path: ./phone
                remote: nas
                remote_path: phone
                mode: \(mode)
                conflict: ask

            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        return work
    }

    @Test func statusShowsTheFolderAsConfiguredWithPlurals() async throws {
        let work = try setUp(files: ["DCIM/a.jpg"])
        let push = try await work.ferry(["push"])
        #expect(push.status == 0, "\(push.diagnostics)")
        let status = try await work.ferry(["status", "--errors"])
        let lines = status.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "photos: ./phone → nas:phone (push)", "\(status.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("  last run 20") && $0.range(of: #" [+-]\d{4}$"#, options: .regularExpression) != nil })
        #expect(lines.contains { $0.hasPrefix("  in sync") && $0.contains(" 1 file ") })
        #expect(lines.contains { $0.contains("(1 in sync)") })
        #expect(lines.contains("  problems: none"))
        let json = try await work.ferry(["status", "--json"])
        #expect(json.standardOutput.contains("\"inSync\""), "--json keeps the machine names")
    }

    /// The arrow matches the folder's mode: ← for a pull, ⇄ for a sync.
    @Test(arguments: [("pull", "←"), ("sync", "⇄")])
    func statusArrowFollowsTheMode(mode: String, arrow: String) async throws {
        let work = try setUp(mode: mode)
        try FileManager.default.createDirectory(atPath: work.directory.child("backup/phone"), withIntermediateDirectories: true)
        let run = try await work.ferry([mode])
        #expect(run.status == 0, "\(run.diagnostics)")
        let status = try await work.ferry(["status"])
        #expect(status.standardOutput.split(separator: "\n").first == "photos: ./phone \(arrow) nas:phone (\(mode))",
                "\(status.standardOutput)")
    }

    @Test func statusOfOneFolderAndForgettingAnAdHocPair() async throws {
        let work = try setUp()
        #expect(try await work.ferry(["push"]).status == 0)
        let adHoc = try await work.ferry(["push", "./phone", "--to", "./elsewhere"])
        #expect(adHoc.status == 0, "\(adHoc.diagnostics)")
        let all = try await work.ferry(["status"])
        #expect(all.standardOutput.contains("./phone – ") && all.standardOutput.contains("(ad-hoc; ferry forget ./phone drops it)"),
                "\(all.standardOutput)")
        // The remote as it can be typed after --to, not the backend's internal name.
        #expect(all.standardOutput.contains("./phone – /") && all.standardOutput.contains("/elsewhere (ad-hoc"),
                "\(all.standardOutput)")
        #expect(!all.standardOutput.contains("local:"), "\(all.standardOutput)")
        let one = try await work.ferry(["status", "photos"])
        #expect(one.standardOutput.hasPrefix("photos: ") && !one.standardOutput.contains("ad-hoc"), "\(one.standardOutput)")

        let forget = try await work.ferry(["forget", "./phone"])
        #expect(forget.status == 0 && forget.standardOutput.hasPrefix("forgot ./phone – "), "\(forget.diagnostics)")
        let after = try await work.ferry(["status"])
        #expect(!after.standardOutput.contains("ad-hoc") && after.standardOutput.hasPrefix("photos: "), "\(after.standardOutput)")
        let again = try await work.ferry(["forget", "./phone"])
        #expect(again.status == 2 && again.standardError.hasPrefix("ferry: no folder './phone' in the journal"))
    }

    @Test func dryRunEndsWithWhatItWouldDo() async throws {
        let work = try setUp()
        let dryRun = try await work.ferry(["push", "--dry-run"])
        #expect(dryRun.status == 0)
        let last = dryRun.standardOutput.split(separator: "\n").last.map(String.init)
        #expect(last == "push photos → nas:phone: dry run, nothing changed; would upload 3 files (33 B), delete 0", "\(dryRun.standardOutput)")
    }

    @Test func resolveTakesThePathAsPrintedAndNowCarriesItOut() async throws {
        let work = try setUp(mode: "sync", files: ["DCIM/a.jpg"])
        #expect(try await work.ferry(["sync"]).status == 0)
        try Data("local".utf8).write(to: URL(fileURLWithPath: work.directory.child("phone/DCIM/a.jpg")))
        try Data("remote!".utf8).write(to: URL(fileURLWithPath: work.directory.child("backup/phone/DCIM/a.jpg")))
        let conflicted = try await work.ferry(["sync"])
        #expect(conflicted.status == 1 && conflicted.standardError.contains("ferry resolve DCIM/a.jpg"), "\(conflicted.diagnostics)")
        // Pasted from the conflict line, in the directory above the folder.
        let resolve = try await work.ferry(["resolve", "DCIM/a.jpg", "--keep", "local", "--now"])
        #expect(resolve.status == 0, "\(resolve.diagnostics)")
        let remote = try String(contentsOfFile: work.directory.child("backup/phone/DCIM/a.jpg"), encoding: .utf8)
        #expect(remote == "local")
    }
}
