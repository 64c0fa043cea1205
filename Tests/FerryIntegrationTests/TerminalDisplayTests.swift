import FerryTestSupport
import Foundation
import Testing

/// What a person sees on a terminal (tmux at 80 and 60 columns): the live table stays one
/// table at the bottom, `-v` lines scroll above it, nothing is wider than the terminal.
///
/// The pushes go through the test plugin `exec:faulty` with `hold`: the last file's upload
/// waits until the test creates `release`, so the table is on screen for as long as the
/// test looks at it, whatever the machine's load (no bandwidth limit that the test must
/// outpace).
@Suite(.integration) struct TerminalDisplayTests {
    static let files = 16
    static let held = String(format: "clip-%02d.mp4", files - 1)

    private struct Scene {
        let workspace = Workspace()
        var config: String { workspace.directory.child("config.yml") }
        var release: String { workspace.directory.child("release") }

        func command(_ arguments: String) -> String {
            "'\(FerryProcess.executable)' \(arguments) --config '\(config)' --state '\(workspace.state)'"
        }

        func releaseTheHeldFile() throws {
            try Data("release\n".utf8).write(to: URL(fileURLWithPath: release))
        }
    }

    /// `files` files of 48 KiB in `src/`, pushed by folder `media` into a content store
    /// through `exec:faulty`, which holds the upload of `hold` (when given) until released.
    private func scene(hold: String? = held) throws -> Scene {
        let scene = Scene()
        let workspace = scene.workspace
        try FileManager.default.createDirectory(atPath: workspace.source, withIntermediateDirectories: true)
        for index in 0..<Self.files {
            let data = Data(repeating: UInt8(index), count: 48 * 1024)
            try data.write(to: URL(fileURLWithPath: workspace.source + String(format: "/clip-%02d.mp4", index)))
        }
        let lines = [
            "remotes:",
            workspace.heldStoreRemote("store", hold: hold),
            "folders:",
            "  media:",
            "    path: src",
            "    remote: store",
            "  back:",
            "    path: dst",
            "    remote: store",
            "    mode: pull",
        ]
        try lines.joined(separator: "\n").appending("\n").write(toFile: scene.config, atomically: true, encoding: .utf8)
        return scene
    }

    /// The table's first line: "push media  0:02", "push media  12:40".
    private static func isTitle(_ row: String) -> Bool { row.wholeMatch(of: /push \S+  [0-9]+:[0-9]{2}/) != nil }
    private static func uploaded(_ rows: [String]) -> [String] { rows.filter { $0.hasPrefix("uploaded clip-") } }
    /// Every file but the held one has its per-file line on screen.
    private static func allButHeldSent(_ rows: [String]) -> Bool { Set(uploaded(rows)).count == files - 1 }

    @Test(arguments: [80, 60])
    func pushWithVerboseKeepsEveryLineAboveOneTable(width: Int) async throws {
        let scene = try scene()
        let terminal = try await TerminalSession(scene.command("push media -v"),
                                                 in: scene.workspace.directory.path, width: width, height: 40)
        var screensChecked = 0
        let check: ([String]) -> Void = { rows in
            screensChecked += 1
            #expect(rows.filter(Self.isTitle).count <= 1, "the table's title repeated:\n\(rows.joined(separator: "\n"))")
            for row in rows { #expect(row.count <= width, "row wider than \(width): \(row)") }
        }
        // While the last file is held: every other file's line above exactly one table.
        let during = try await terminal.waitFor("every file but the held one sent, under the table", each: check) {
            Self.allButHeldSent($0) && $0.contains(where: Self.isTitle)
        }
        let title = during.firstIndex(where: Self.isTitle) ?? 0
        let lastLine = during.lastIndex { $0.hasPrefix("uploaded clip-") } ?? 0
        #expect(lastLine < title, "the table is not below the per-file lines:\n\(during.joined(separator: "\n"))")
        try scene.releaseTheHeldFile()
        let end = try await terminal.waitFor("the end of the push", each: check) { $0.contains { $0.hasPrefix("[exit ") } }
        #expect(screensChecked >= 2)
        #expect(end.contains("[exit 0]"), "\(end.joined(separator: "\n"))")
        #expect(Set(Self.uploaded(end)).count == Self.files, "per-file lines lost:\n\(end.joined(separator: "\n"))")
        #expect(!end.contains(where: Self.isTitle), "the table was left on screen")
        // The summary, broken between its parts where the terminal is narrow.
        #expect(end.contains { $0.hasPrefix("push media → store: \(Self.files) uploaded") }, "\(end.joined(separator: "\n"))")
        #expect(end.contains { $0.hasSuffix(" s") && ($0.hasPrefix("push media → store: ") || $0.hasPrefix("  ")) })
        // No frame went into the scrollback either (a clear from the top-left corner does
        // that in tmux).
        let history = try await terminal.screenWithHistory()
        #expect(!history.contains(where: Self.isTitle), "a frame in the scrollback:\n\(history.joined(separator: "\n"))")
    }

    @Test func tableIsRedrawnCleanlyAfterTheTerminalNarrows() async throws {
        let scene = try scene()
        let terminal = try await TerminalSession(scene.command("push media -v"),
                                                 in: scene.workspace.directory.path, width: 100, height: 40)
        try await terminal.waitFor("the table at 100 columns") { Self.allButHeldSent($0) && $0.contains(where: Self.isTitle) }
        // Between two frames: a frame laid out for 100 columns and drawn after tmux reflowed
        // its lines would leave a row behind, a race the program cannot see (see
        // `resizeBetweenWrites`). What is tested is the redraw once Ferry knows the width.
        try await terminal.resizeBetweenWrites(width: 60, height: 40)
        // The redraw after the resize: one table, no row wider than the new width. The held
        // file keeps the table up until the test has seen that.
        try await terminal.waitFor("one table at 60 columns") { rows in
            rows.filter(Self.isTitle).count == 1 && rows.allSatisfy { $0.count <= 60 }
        }
        try scene.releaseTheHeldFile()
        try await terminal.waitFor("the end of the push") { $0.contains { $0.hasPrefix("[exit ") } }
        // tmux moves top rows into its history when it reflows a narrowed screen: read both.
        let end = try await terminal.screenWithHistory()
        #expect(end.contains("[exit 0]"))
        #expect(!end.contains(where: Self.isTitle), "a table frame was left behind:\n\(end.joined(separator: "\n"))")
        // Every per-file line once: the redraws erased none and left no copy.
        let lines = Self.uploaded(end)
        #expect(lines.count == Self.files && Set(lines).count == Self.files, "per-file lines lost:\n\(end.joined(separator: "\n"))")
    }

    @Test func ctrlCStopsWithWhatIsLeftAndExit130() async throws {
        let scene = try scene(hold: "clip-08.mp4")
        let terminal = try await TerminalSession(scene.command("push media --transfers 1"),
                                                 in: scene.workspace.directory.path, width: 80, height: 30)
        try await terminal.waitFor("the table while clip-08 is held") { rows in
            rows.contains(where: Self.isTitle) && FileManager.default.fileExists(atPath: scene.workspace.directory.child("held"))
        }
        try await terminal.send("C-c")
        let end = try await terminal.waitFor("the exit") { $0.contains { $0.hasPrefix("[exit ") } }
        #expect(end.contains("[exit 130]"), "\(end.joined(separator: "\n"))")
        #expect(end.contains { $0.hasPrefix("ferry: stopped; ") && $0.hasSuffix("left, run the same command to continue") },
                "\(end.joined(separator: "\n"))")
        #expect(!end.contains(where: Self.isTitle), "the table froze on screen")

        // Running it again finishes the rest, and the store holds the whole folder.
        try scene.releaseTheHeldFile()
        let rest = try await scene.workspace.ferry(["push", "media", "--config", scene.config, "--state", scene.workspace.state, "--json"])
        #expect(rest.status == 0, "\(rest.diagnostics)")
        #expect((rest.int("uploaded") ?? 0) >= 8, "\(rest.diagnostics)")
        let back = try await scene.workspace.ferry(["pull", "back", "--config", scene.config, "--state", scene.workspace.state, "--json"])
        #expect(back.status == 0, "\(back.diagnostics)")
        #expect(try TreeComparison.differences(scene.workspace.source, scene.workspace.destination, compareModificationTimes: false) == [])
    }

    /// The clips named in per-file lines of `ferry watch -v` (log lines: "12:00:01 media: uploaded clip-03.mp4 (48.0 KiB)").
    private static func watchUploaded(_ rows: [String]) -> Set<String> {
        Set(rows.compactMap { row in
            guard let start = row.range(of: "uploaded clip-") else { return nil }
            return String(row[start.upperBound...].prefix(2))
        })
    }

    @Test(arguments: [80, 60])
    func watchShowsOneLiveTableWithEveryLineAboveIt(width: Int) async throws {
        let scene = try scene()
        let config = try String(contentsOfFile: scene.config, encoding: .utf8)
        try (config + "watch:\n  quiet_period: 200ms\n  stop_timeout: 5s\n")
            .write(toFile: scene.config, atomically: true, encoding: .utf8)
        let terminal = try await TerminalSession(scene.command("watch media -v"),
                                                 in: scene.workspace.directory.path, width: width, height: 40)
        let check: ([String]) -> Void = { rows in
            #expect(rows.filter(Self.isTitle).count <= 1, "the table's title repeated:\n\(rows.joined(separator: "\n"))")
            for row in rows { #expect(row.count <= width, "row wider than \(width): \(row)") }
        }
        try await terminal.waitFor("the start line") { $0.contains { $0.hasPrefix("watching ./src → ") } }
        // The first run sends what is there; the held clip keeps that run, and its table, up.
        let during = try await terminal.waitFor("every clip but the held one sent, under the table", each: check) {
            Self.watchUploaded($0).count == Self.files - 1 && $0.contains(where: Self.isTitle)
        }
        let title = during.firstIndex(where: Self.isTitle) ?? 0
        let lastLine = during.lastIndex { $0.contains("uploaded clip-") } ?? 0
        #expect(lastLine < title, "the table is not below the per-file lines:\n\(during.joined(separator: "\n"))")
        try scene.releaseTheHeldFile()
        // The run ends: the table is taken down, every per-file line stays.
        try await terminal.waitFor("the run's end", each: check) {
            Self.watchUploaded($0).count == Self.files && !$0.contains(where: Self.isTitle)
        }
        try await terminal.send("C-c")
        let end = try await terminal.waitFor("the stop line", each: check) { $0.contains { $0.hasPrefix("[exit ") } }
        #expect(end.contains { $0.hasPrefix("stopped watching") }, "\(end.joined(separator: "\n"))")
        let history = try await terminal.screenWithHistory()
        #expect(!history.contains(where: Self.isTitle), "a frame in the scrollback:\n\(history.joined(separator: "\n"))")
    }

    @Test func daemonSaysWhatItRunsAndWhenItStops() async throws {
        let scene = try scene(hold: nil)
        let terminal = try await TerminalSession(scene.command("daemon"), in: scene.workspace.directory.path, width: 80, height: 30)
        try await terminal.waitFor("the start lines") { rows in
            rows.contains { $0.hasPrefix("watching ./src → store") } && rows.contains { $0.hasPrefix("polling ./dst ← store") }
                && rows.contains { $0 == "daemon running, 0 schedules; ferry status shows it; Ctrl-C stops it" }
        }
        try await terminal.send("C-c")
        let end = try await terminal.waitFor("the exit") { $0.contains { $0.hasPrefix("[exit ") } }
        #expect(end.contains("daemon stopped"), "\(end.joined(separator: "\n"))")
        #expect(end.contains("[exit 0]"), "\(end.joined(separator: "\n"))")
        for row in end { #expect(row.count <= 80, "row wider than 80: \(row)") }
    }

    @Test(arguments: [80, 60])
    func watchSaysWhatItWatchesAndWhenItStops(width: Int) async throws {
        let workspace = Workspace()
        try FileManager.default.createDirectory(atPath: workspace.source + "/later", withIntermediateDirectories: true)
        let config = workspace.directory.child("config.yml")
        try Data("watch:\n  quiet_period: 300ms\n  stop_timeout: 5s\n".utf8).write(to: URL(fileURLWithPath: config))
        let command = "'\(FerryProcess.executable)' watch src --to dst -v --config '\(config)' --state '\(workspace.state)'"
        let terminal = try await TerminalSession(command, in: workspace.directory.path, width: width, height: 40)
        try await terminal.waitFor("the start line") { $0.contains { $0.hasPrefix("watching ./src → ") } }
        try Data(repeating: 7, count: 1000).write(to: URL(fileURLWithPath: workspace.source + "/later/new.jpg"))
        try await terminal.waitFor("the new file sent") { $0.contains { $0.contains("uploaded later/new.jpg") } }
        try await terminal.send("C-c")
        let end = try await terminal.waitFor("the stop line") { $0.contains { $0.hasPrefix("[exit ") } }
        #expect(end.contains { $0.hasPrefix("stopped watching") }, "\(end.joined(separator: "\n"))")
        for row in end { #expect(row.count <= width, "row wider than \(width): \(row)") }
        #expect(!end.contains { $0.contains("label=") || $0.contains("ferry :") }, "module names in log lines")
    }
}
