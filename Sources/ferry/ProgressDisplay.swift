import FerryCore
import Foundation
import Synchronization

/// A live table on the terminal, one line per queue: files, bytes, rate and ETA. Redrawn
/// four times a second on stderr; only used when both stdout and stderr are terminals.
final class ProgressDisplay: Sendable {
    private let progress: RunProgress
    private let title: String
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let drawnLines = Mutex<Int>(0)

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
        let seconds = max(0.001, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
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
        let previous = drawnLines.withLock { count -> Int in
            defer { count = lines.count }
            return count
        }
        var text = previous > 0 ? "\u{1B}[\(previous)A" : ""
        for line in lines { text += "\r\u{1B}[2K" + line + "\n" }
        StandardStreams.errorRaw(text)
    }

    private func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return left ? padding + text : text + padding
    }

    private func clear() {
        let previous = drawnLines.withLock { count -> Int in
            defer { count = 0 }
            return count
        }
        guard previous > 0 else { return }
        var text = "\u{1B}[\(previous)A"
        for _ in 0..<previous { text += "\r\u{1B}[2K\n" }
        text += "\u{1B}[\(previous)A"
        StandardStreams.errorRaw(text)
    }
}
