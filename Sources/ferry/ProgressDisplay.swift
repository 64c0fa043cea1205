import FerryCore
import FerryPluginAPI
import Foundation
import Synchronization

/// A live table on the terminal, one line per queue: files, bytes, rate and ETA. Redrawn
/// four times a second on stderr; only used when both stdout and stderr are terminals.
final class ProgressDisplay: Sendable {
    private let progress: RunProgress
    private let title: String
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// Lines on screen, and whether the display was stopped; drawing and clearing both
    /// happen under this lock, so a late redraw can never land after the final clear.
    private let screen = Mutex<(lines: Int, stopped: Bool)>((0, false))

    init(progress: RunProgress, title: String) {
        self.progress = progress
        self.title = title
    }

    func start() {
        let newTask = Task { [self] in
            while !Task.isCancelled {
                draw()
                try? await Task.sleep(for: .milliseconds(250))
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
        clear()
    }

    private func draw() {
        let queues = progress.snapshot()
        guard !queues.isEmpty else { return }
        let elapsed = progress.started.duration(to: .now)
        let seconds = max(0.001, elapsed.inSeconds)
        var lines = ["\(title)  \(ByteFormat.duration(seconds))"]
        for queue in queues {
            let rate = Double(queue.bytesDone) / seconds
            let remaining = Double(max(0, queue.bytesTotal - queue.bytesDone))
            let eta = queue.filesDone + queue.filesFailed == queue.filesTotal ? "done" : rate > 0 ? ByteFormat.duration(remaining / rate) : "--:--"
            let failed = queue.filesFailed > 0 ? "  \(queue.filesFailed) failed" : ""
            lines.append("  " + pad(queue.queue, 11) + " " + pad("\(queue.filesDone)/\(queue.filesTotal)", 13, left: true)
                + " files  " + pad(ByteFormat.string(queue.bytesDone), 10, left: true) + " / " + pad(ByteFormat.string(queue.bytesTotal), 10)
                + "  " + pad(ByteFormat.rate(rate), 12, left: true) + "  ETA " + eta + failed)
        }
        screen.withLock { screen in
            guard !screen.stopped else { return }
            var text = screen.lines > 0 ? "\u{1B}[\(screen.lines)A" : ""
            for line in lines { text += "\r\u{1B}[2K" + line + "\n" }
            StandardStreams.errorRaw(text)
            screen.lines = lines.count
        }
    }

    private func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return left ? padding + text : text + padding
    }

    /// Prints a line (a failure, a conflict) above the table; the next redraw puts the
    /// table back below it.
    func interject(_ line: String) {
        screen.withLock { screen in
            var text = screen.lines > 0 ? "\u{1B}[\(screen.lines)A" : ""
            for _ in 0..<screen.lines { text += "\r\u{1B}[2K\n" }
            if screen.lines > 0 { text += "\u{1B}[\(screen.lines)A" }
            StandardStreams.errorRaw(text + line + "\n")
            screen.lines = 0
        }
    }

    private func clear() {
        screen.withLock { screen in
            screen.stopped = true
            guard screen.lines > 0 else { return }
            var text = "\u{1B}[\(screen.lines)A"
            for _ in 0..<screen.lines { text += "\r\u{1B}[2K\n" }
            text += "\u{1B}[\(screen.lines)A"
            StandardStreams.errorRaw(text)
            screen.lines = 0
        }
    }
}
