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

    /// Resizes the terminal at a moment when none of the program's output is on its way to
    /// the screen: the program is stopped, a marker written to the terminal after its last
    /// output has been read back (so everything before it is drawn), the terminal is resized
    /// and has told the program's pty, and only then does the program go on.
    ///
    /// Why not simply resize: tmux, like every terminal that reflows, rewraps its lines first
    /// and tells the program the new size after. A frame the program laid out for the old
    /// width and that reaches the screen between the two is drawn on the reflowed lines, and
    /// its erase (counted for the old width) leaves a row of the previous frame behind. No
    /// program that redraws lines in place can see that coming; a test of the redraw after
    /// a resize must not hang on when the resize lands against a frame.
    public func resizeBetweenWrites(width: Int, height: Int) async throws {
        let pane = try await tmux(["display-message", "-p", "-t", "test", "#{pane_pid} #{pane_tty}"])
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(String.init)
        guard pane.count == 2, let shell = Int32(pane[0]) else {
            throw TestServerError(message: "tmux did not name the pane's process and tty: \(pane)")
        }
        let tty = pane[1]
        let programs = ProcessTable.children(of: shell)
        guard !programs.isEmpty else { throw TestServerError(message: "no program runs in the pane to resize around") }
        for pid in programs { kill(pid, SIGSTOP) }
        defer { for pid in programs { kill(pid, SIGCONT) } }
        try await waitUntil("the program stopped") { programs.allSatisfy { ProcessTable.isStopped($0) } }
        let marker = "ferry-test-" + UUID().uuidString
        try await onOwnThread { try Self.write("\u{1B}]2;\(marker)\u{1B}\\", to: tty) }
        try await waitUntil("the terminal drew the program's last output") {
            (try? await self.tmux(["display-message", "-p", "-t", "test", "#{pane_title}"]))?
                .trimmingCharacters(in: .whitespacesAndNewlines) == marker
        }
        try await tmux(["resize-window", "-t", "test", "-x", "\(width)", "-y", "\(height)"])
        try await waitUntil("the pty told the new size") { Self.size(of: tty) == [width, height] }
    }

    private func waitUntil(_ what: String, _ condition: () async -> Bool) async throws {
        guard try await poll(every: .milliseconds(5), { await condition() ? true : nil }) != nil else {
            throw TestServerError(message: "never saw \(what)")
        }
    }

    /// `step` every `interval` until it gives a value; nil after 15,000 tries, which only
    /// guard against a hang.
    private func poll<T>(every interval: Duration, _ step: () async throws -> T?) async throws -> T? {
        for _ in 0..<15_000 {
            if let value = try await step() { return value }
            try await Task.sleep(for: interval)
        }
        return nil
    }

    private static func write(_ text: String, to tty: String) throws {
        guard let handle = FileHandle(forWritingAtPath: tty) else {
            throw TestServerError(message: "cannot open \(tty) for writing")
        }
        defer { try? handle.close() }
        try handle.write(contentsOf: Data(text.utf8))
    }

    /// Columns and rows as the pty reports them to the program.
    private static func size(of tty: String) -> [Int]? {
        let descriptor = open(tty, O_RDONLY | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0 else { return nil }
        return [Int(size.ws_col), Int(size.ws_row)]
    }

    /// Polls the screen until `condition` holds, every screen seen along the way passed to
    /// `each` (to check that something never appears); 300 s only guards against a hang.
    @discardableResult
    public func waitFor(_ what: String, each: ([String]) -> Void = { _ in },
                        _ condition: ([String]) -> Bool) async throws -> [String] {
        let seen = try await poll(every: .milliseconds(20)) { () async throws -> [String]? in
            let rows = try await screen()
            each(rows)
            return condition(rows) ? rows : nil
        }
        if let seen { return seen }
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
