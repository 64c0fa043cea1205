import Foundation

/// A program on a real terminal of a given size, as a person sees it: a detached tmux
/// session on its own socket. Tests type into it (`send`), read the screen (`screen`) and
/// wait for what should appear on it (`waitFor`), never for a span of time. Every tmux call
/// runs on a thread of its own (`onOwnThread`), so a loaded cooperative pool cannot hold
/// back a look at the screen.
public final class TerminalSession: Sendable {
    private let socket: String
    private let scratch: TemporaryDirectory

    /// Runs `command` (a shell command line) in `directory` on a `width`×`height` terminal.
    /// The pane stays open after the command ends, so its last screen can be read (the shell
    /// around it traps Ctrl-C, which the command still gets with its default handling).
    public init(_ command: String, in directory: String, width: Int, height: Int) async throws {
        scratch = TemporaryDirectory("ferry-tmux")
        socket = scratch.child("socket")
        try await tmux(["new-session", "-d", "-x", "\(width)", "-y", "\(height)", "-c", directory, "-s", "test",
                  "sh", "-c", "trap 'true' INT; " + command + "; echo \"[exit $?]\"; exec sleep 3600"])
        // A fixed size: the detached session would otherwise follow the latest client.
        try await tmux(["set-option", "-t", "test", "window-size", "manual"])
    }

    deinit {
        _ = try? Self.tmux(socket: socket, scratch: scratch, ["kill-server"])
    }

    /// The visible rows, trailing blanks removed; a line the terminal wrapped comes back
    /// joined, so a line wider than the terminal shows as one long row.
    public func screen() async throws -> [String] {
        Self.rows(try await tmux(["capture-pane", "-p", "-J", "-t", "test"]))
    }

    private static func rows(_ text: String) -> [String] {
        var rows = text.components(separatedBy: "\n").map { String($0.reversed().drop(while: { $0 == " " }).reversed()) }
        while rows.last == "" { rows.removeLast() }
        return rows
    }

    /// The rows that scrolled into the terminal's history, then the visible ones (as `screen`).
    /// A terminal that reflows its lines after a resize may push top rows into its history.
    public func screenWithHistory() async throws -> [String] {
        Self.rows(try await tmux(["capture-pane", "-p", "-J", "-S", "-", "-t", "test"]))
    }

    /// Keys as tmux names them: "C-c", "Enter", or literal text.
    public func send(_ keys: String...) async throws {
        try await tmux(["send-keys", "-t", "test"] + keys)
    }

    public func resize(width: Int, height: Int) async throws {
        try await tmux(["resize-window", "-t", "test", "-x", "\(width)", "-y", "\(height)"])
    }

    /// Polls the screen until `condition` holds, every screen seen along the way passed to
    /// `each` (to check that something never appears); 300 s only guards against a hang.
    @discardableResult
    public func waitFor(_ what: String, each: ([String]) -> Void = { _ in },
                        _ condition: ([String]) -> Bool) async throws -> [String] {
        for _ in 0..<15_000 {
            let rows = try await screen()
            each(rows)
            if condition(rows) { return rows }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestServerError(message: "terminal never showed \(what); last screen:\n" + (try await screen()).joined(separator: "\n"))
    }

    @discardableResult
    private func tmux(_ arguments: [String]) async throws -> String {
        try await onOwnThread { [socket, scratch] in try Self.tmux(socket: socket, scratch: scratch, arguments) }
    }

    private static func tmux(socket: String, scratch: TemporaryDirectory, _ arguments: [String]) throws -> String {
        let call = UUID().uuidString
        let output = scratch.child("out-" + call), error = scratch.child("err-" + call)
        defer {
            try? FileManager.default.removeItem(atPath: output)
            try? FileManager.default.removeItem(atPath: error)
        }
        let pid = try ChildProcess.spawn(["/usr/bin/env", "tmux", "-S", socket] + arguments, output: output, error: error)
        let status = ChildProcess.wait(pid)
        guard status == 0 else {
            let message = (try? String(contentsOfFile: error, encoding: .utf8)) ?? ""
            throw TestServerError(message: "tmux \(arguments.first ?? "") failed (\(status)): \(message)")
        }
        return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }
}
