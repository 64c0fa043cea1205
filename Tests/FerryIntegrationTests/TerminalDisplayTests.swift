import FerryTestSupport
import Foundation
import Testing

/// What a person sees on a terminal (tmux at 80 and 60 columns): the live table stays one
/// table at the bottom, `-v` lines scroll above it, nothing is wider than the terminal.
@Suite struct TerminalDisplayTests {
    static let files = 16

    /// A workspace with `files` files of 48 KiB: at --bwlimit 128k a push takes about 6 s,
    /// long enough for the table to be on screen while the test reads it.
    private func workspace() throws -> Workspace {
        let workspace = Workspace()
        try FileManager.default.createDirectory(atPath: workspace.source, withIntermediateDirectories: true)
        for index in 0..<Self.files {
            let data = Data(repeating: UInt8(index), count: 48 * 1024)
            try data.write(to: URL(fileURLWithPath: workspace.source + String(format: "/clip-%02d.mp4", index)))
        }
        return workspace
    }

    private func command(_ workspace: Workspace, _ arguments: String) -> String {
        "'\(FerryProcess.executable)' \(arguments) --state '\(workspace.state)'"
    }

    /// The table's first line: "push NAME  0:02" (the summary line ends "in 3.1 s" instead).
    private static func isTitle(_ row: String) -> Bool { row.hasPrefix("push ") && row.contains("  0:") }
    private static func isSummary(_ row: String) -> Bool { row.hasPrefix("push ") && row.hasSuffix(" s") }
    private static func uploaded(_ rows: [String]) -> [String] { rows.filter { $0.hasPrefix("uploaded clip-") } }

    /// Checks every screen seen: at most one table title, no row wider than the terminal.
    private final class ScreenLog {
        var titlesSeen = 0
        var tableSeen = false
        var screens = 0
    }

    @Test(arguments: [80, 60])
    func pushWithVerboseKeepsEveryLineAboveOneTable(width: Int) async throws {
        let workspace = try workspace()
        let terminal = try TerminalSession(command(workspace, "push src --to dst -v --bwlimit 128k"),
                                           in: workspace.directory.path, width: width, height: 40)
        let log = ScreenLog()
        let check: ([String]) -> Void = { rows in
            log.screens += 1
            let titles = rows.filter(Self.isTitle).count
            #expect(titles <= 1, "the table's title repeated:\n\(rows.joined(separator: "\n"))")
            if titles == 1 { log.tableSeen = true }
            for row in rows where !Self.isSummary(row) { #expect(row.count <= width, "row wider than \(width): \(row)") }
        }
        let end = try await terminal.waitFor("the end of the push", each: check) { $0.contains { $0.hasPrefix("[exit ") } }
        #expect(log.tableSeen, "the progress table never showed in \(log.screens) screens")
        #expect(end.contains("[exit 0]"))
        #expect(Set(Self.uploaded(end)).count == Self.files, "per-file lines lost:\n\(end.joined(separator: "\n"))")
        #expect(!end.contains(where: Self.isTitle), "the table was left on screen")
        #expect(end.contains { Self.isSummary($0) && $0.contains("\(Self.files) uploaded") })
    }

    @Test func tableIsRedrawnCleanlyAfterTheTerminalNarrows() async throws {
        let workspace = try workspace()
        let terminal = try TerminalSession(command(workspace, "push src --to dst -v --bwlimit 128k --transfers 1"),
                                           in: workspace.directory.path, width: 100, height: 40)
        try await terminal.waitFor("the table") { $0.contains(where: Self.isTitle) }
        try terminal.resize(width: 60, height: 40)
        let log = ScreenLog()
        let end = try await terminal.waitFor("the end of the push", each: { rows in
            // A frame drawn before the resize may still be on screen for one redraw.
            log.screens += 1
            if log.screens > 25 { #expect(rows.filter(Self.isTitle).count <= 1, "\(rows.joined(separator: "\n"))") }
        }) { $0.contains { $0.hasPrefix("[exit ") } }
        #expect(end.contains("[exit 0]"))
        #expect(!end.contains(where: Self.isTitle), "a table frame was left behind:\n\(end.joined(separator: "\n"))")
        // tmux may move the top rows into its history when it reflows; what is on screen is
        // an unbroken run of per-file lines up to the last file: the redraw erased none.
        let numbers = Self.uploaded(end).compactMap { Int($0.dropFirst("uploaded clip-".count).prefix(2)) }
        #expect(numbers.last == Self.files - 1 && numbers == Array((numbers.first ?? 0)..<Self.files),
                "per-file lines lost:\n\(end.joined(separator: "\n"))")
    }

    @Test func ctrlCStopsWithWhatIsLeftAndExit130() async throws {
        let workspace = try workspace()
        let terminal = try TerminalSession(command(workspace, "push src --to dst --bwlimit 64k"),
                                           in: workspace.directory.path, width: 80, height: 30)
        try await terminal.waitFor("the table") { $0.contains(where: Self.isTitle) }
        try terminal.send("C-c")
        let end = try await terminal.waitFor("the exit") { $0.contains { $0.hasPrefix("[exit ") } }
        #expect(end.contains("[exit 130]"), "\(end.joined(separator: "\n"))")
        #expect(end.contains { $0.hasPrefix("ferry: stopped; ") && $0.hasSuffix("left, run the same command to continue") })
        #expect(!end.contains(where: Self.isTitle), "the table froze on screen")

        // Running it again finishes the rest.
        let rest = try await workspace.push()
        #expect(rest.status == 0, "\(rest.diagnostics)")
        #expect(try TreeComparison.files(in: workspace.destination).count == Self.files)
    }

    @Test(arguments: [80, 60])
    func watchSaysWhatItWatchesAndWhenItStops(width: Int) async throws {
        let workspace = try workspace()
        try FileManager.default.createDirectory(atPath: workspace.source + "/later", withIntermediateDirectories: true)
        let config = workspace.directory.child("config.yml")
        try Data("watch:\n  quiet_period: 300ms\n  stop_timeout: 5s\n".utf8).write(to: URL(fileURLWithPath: config))
        let terminal = try TerminalSession(command(workspace, "watch src --to dst -v --config '\(config)'"),
                                           in: workspace.directory.path, width: width, height: 40)
        try await terminal.waitFor("the start line") { $0.contains { $0.hasPrefix("watching ./src → ") } }
        try Data(repeating: 7, count: 1000).write(to: URL(fileURLWithPath: workspace.source + "/later/new.jpg"))
        try await terminal.waitFor("the new file sent") { $0.contains { $0.contains("uploaded later/new.jpg") } }
        try terminal.send("C-c")
        let end = try await terminal.waitFor("the stop line") { $0.contains { $0.hasPrefix("[exit ") } }
        #expect(end.contains { $0.hasPrefix("stopped watching") }, "\(end.joined(separator: "\n"))")
        for row in end { #expect(row.count <= width, "row wider than \(width): \(row)") }
        #expect(!end.contains { $0.contains("label=") || $0.contains("ferry :") }, "module names in log lines")
    }
}
