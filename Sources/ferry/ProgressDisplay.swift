import FerryCore
import FerryEngine
import FerryPluginAPI
import FerrySystem
import Foundation
import Synchronization

/// Puts a `ProgressTable` on the terminal and keeps it at the bottom: redrawn four times a
/// second on stderr, and every message (`-v` per-file lines, failures, conflicts) printed
/// above it, where it scrolls away as in apt or cargo. Only used when both stdout and
/// stderr are terminals.
final class ProgressDisplay: Sendable {
    private let progress: RunProgress
    private let title: String
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// What is on the screen and what the next frame needs; drawing, printing above and
    /// clearing all happen under this lock, so a late redraw never lands after the clear.
    private struct Screen {
        /// The table's lines as last drawn.
        var lines: [String] = []
        var stopped = false
        var rates: [String: RecentRate] = [:]
        /// The most bytes each queue has shown: a failed attempt's bytes are taken back
        /// from the run's count (they will be sent again), but a count on screen that runs
        /// backwards during an outage reads as lost work.
        var shownBytes: [String: Int64] = [:]
        var offlineUntil: ContinuousClock.Instant?
    }
    private let screen = Mutex(Screen())

    init(progress: RunProgress, title: String) {
        self.progress = progress
        self.title = title
    }

    func start() {
        let newTask = Task { [self] in
            while !Task.isCancelled {
                screen.withLock { draw(&$0, above: nil) }
                await SystemClock().sleep(for: 0.25)
            }
        }
        task.withLock { $0 = newTask }
    }

    func stop() {
        let running = task.withLock { current -> Task<Void, Never>? in
            defer { current = nil }
            return current
        }
        running?.cancel()
        screen.withLock { screen in
            guard !screen.stopped else { return }
            screen.stopped = true
            StandardStreams.errorRaw(Self.erase(screen.lines, width: TerminalSize.columns))
            screen.lines = []
        }
    }

    /// Prints a line above the table (on stdout when `toOutput`, else stderr) and draws the
    /// table again below it.
    func interject(_ line: String, toOutput: Bool = false) {
        screen.withLock { screen in
            if screen.stopped {
                toOutput ? StandardStreams.outputBelowNothing(line) : StandardStreams.errorBelowNothing(line)
            } else {
                draw(&screen, above: (line, toOutput))
            }
        }
    }

    /// The remote went offline (checked again in `nextCheck` seconds), or came back (nil).
    func offline(nextCheck: Double?) {
        screen.withLock { $0.offlineUntil = nextCheck.map { .now + .seconds($0) } }
    }

    /// Files not finished yet (for the message when the run is stopped).
    var filesLeft: Int {
        progress.snapshot().reduce(0) { $0 + max(0, $1.filesTotal - $1.filesDone - $1.filesFailed) }
    }

    private func draw(_ screen: inout Screen, above: (line: String, toOutput: Bool)?) {
        guard !screen.stopped else { return }
        let table = frame(&screen)
        // The width is read again after the layout, as near the write as it can be: a
        // terminal rewraps its lines before it tells the program the new size, and a frame
        // laid out for the old width that lands on the rewrapped lines leaves a row behind.
        var width = 0
        var lines: [String] = []
        while width != TerminalSize.columns {
            width = TerminalSize.columns
            lines = table?.lines(width: width) ?? []
        }
        let erase = Self.erase(screen.lines, width: width)
        if let above {
            StandardStreams.errorRaw(erase)
            above.toOutput ? StandardStreams.outputBelowNothing(above.line) : StandardStreams.errorBelowNothing(above.line)
            StandardStreams.errorRaw(lines.map { $0 + "\n" }.joined())
        } else {
            guard !lines.isEmpty else { return }
            StandardStreams.errorRaw(erase + lines.map { $0 + "\n" }.joined())
        }
        screen.lines = lines
    }

    /// The table for now, or nil before anything is planned.
    private func frame(_ screen: inout Screen) -> ProgressTable? {
        let queues = progress.snapshot()
        guard !queues.isEmpty else { return nil }
        let now = ContinuousClock.now
        let seconds = progress.started.duration(to: now).inSeconds
        let offline = screen.offlineUntil.map { now.duration(to: $0).inSeconds }
        var rows: [ProgressTable.Row] = []
        for queue in queues {
            let shown = min(max(0, queue.bytesDone, screen.shownBytes[queue.queue] ?? 0), max(0, queue.bytesTotal))
            screen.shownBytes[queue.queue] = shown
            var row = ProgressTable.Row(name: queue.queue, filesDone: queue.filesDone, filesFailed: queue.filesFailed,
                                        filesTotal: queue.filesTotal, bytesDone: shown,
                                        bytesTotal: queue.bytesTotal, rate: nil, current: queue.current)
            var rate = screen.rates[queue.queue] ?? RecentRate()
            row.rate = rate.record(seconds: seconds, bytes: row.bytesDone, finished: row.finished)
            screen.rates[queue.queue] = rate
            if offline != nil && !row.finished { row.rate = nil }
            rows.append(row)
        }
        return ProgressTable(title: title, elapsedSeconds: seconds, rows: rows, offlineNextCheck: offline)
    }

    /// Clears the table's rows from the bottom up, leaving the cursor on its first line. Lines
    /// drawn at a width wider than the terminal's now were wrapped onto more rows when it
    /// was resized (the terminal reflows them), so those rows are counted at the new width.
    /// Each row is cleared on its own (erase line, up one) rather than with "clear to the
    /// end of the screen": tmux and some terminals save the whole screen into the
    /// scrollback when that clear starts at the top-left corner, which left old frames in
    /// the history.
    static func erase(_ lines: [String], width: Int) -> String {
        let rows = lines.reduce(0) { $0 + max(1, ($1.count + width - 1) / max(1, width)) }
        return "\r\u{1B}[2K" + String(repeating: "\u{1B}[1A\u{1B}[2K", count: rows)
    }
}

/// The terminal's width, read from stderr each frame so a resize takes effect at once.
enum TerminalSize {
    static var columns: Int { StandardStream.error.terminalColumns ?? 80 }
}
