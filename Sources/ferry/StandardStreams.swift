import FerrySystem
import Foundation
import Synchronization

/// Line-at-a-time writes to stdout and stderr from any task, never interleaved mid-line.
/// Lines are printed with control characters and bidirectional overrides escaped
/// (`TerminalSafeText`): they carry names a remote chose.
///
/// While a live table is shown for the whole process (`ferry watch`, `ferry daemon` on a
/// terminal), every line goes above it (`showTable`), log lines included, so no line is
/// drawn over by the next frame.
enum StandardStreams {
    private static let lock = Mutex<Void>(())
    private static let table = Mutex<ProgressDisplay?>(nil)

    /// Lines printed from now on go above `display` (nil: straight to the stream).
    static func showTable(_ display: ProgressDisplay?) {
        table.withLock { $0 = display }
    }

    static func output(_ line: String) {
        if let display = table.withLock({ $0 }) { return display.interject(line, toOutput: true) }
        outputBelowNothing(line)
    }

    /// `prefix` is written as it is (a terminal sequence of Ferry's own), the line escaped.
    /// Above a table the prefix is left out: the table's erase already starts the line.
    static func error(_ line: String, prefix: String = "") {
        if let display = table.withLock({ $0 }) { return display.interject(line) }
        errorBelowNothing(line, prefix: prefix)
    }

    /// A line after Ctrl-C (a stop line): on a terminal it starts at the line's beginning
    /// and clears it, so the echoed "^C" does not stand in front of it.
    static func errorAfterInterrupt(_ line: String) {
        error(line, prefix: errorIsTerminal ? "\r\u{1B}[K" : "")
    }

    /// A line straight to stdout, for the table itself (which draws itself below it).
    static func outputBelowNothing(_ line: String) {
        write(TerminalSafeText.escaping(line) + "\n", to: .output)
    }

    /// A line straight to stderr, for the table itself.
    static func errorBelowNothing(_ line: String, prefix: String = "") {
        write(prefix + TerminalSafeText.escaping(line) + "\n", to: .error)
    }

    /// Raw text to stderr (progress redraws).
    static func errorRaw(_ text: String) {
        write(text, to: .error)
    }

    static var outputIsTerminal: Bool { StandardStream.output.isTerminal }
    static var errorIsTerminal: Bool { StandardStream.error.isTerminal }

    private static func write(_ text: String, to stream: StandardStream) {
        lock.withLock { _ in stream.write(text) }
    }
}
