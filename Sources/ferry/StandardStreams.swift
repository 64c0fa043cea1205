import Foundation
import Synchronization

/// Line-at-a-time writes to stdout and stderr from any task, never interleaved mid-line.
/// Lines are printed with control characters and bidirectional overrides escaped
/// (`TerminalSafeText`): they carry names a remote chose.
enum StandardStreams {
    private static let lock = Mutex<Void>(())

    static func output(_ line: String) {
        write(TerminalSafeText.escaping(line) + "\n", to: STDOUT_FILENO)
    }

    /// `prefix` is written as it is (a terminal sequence of Ferry's own), the line escaped.
    static func error(_ line: String, prefix: String = "") {
        write(prefix + TerminalSafeText.escaping(line) + "\n", to: STDERR_FILENO)
    }

    /// Raw text to stderr (progress redraws).
    static func errorRaw(_ text: String) {
        write(text, to: STDERR_FILENO)
    }

    static var outputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
    static var errorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    private static func write(_ text: String, to descriptor: Int32) {
        lock.withLock { _ in
            var bytes = Array(text.utf8)
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeMutableBytes { raw in
                    Foundation.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                }
                if written <= 0 {
                    if written < 0 && errno == EINTR { continue }
                    return
                }
                offset += written
            }
            bytes.removeAll()
        }
    }
}
