import Glibc

/// The process's standard output and error: whole writes, and what a terminal tells about
/// itself.
public enum StandardStream: Sendable {
    case output
    case error

    private var descriptor: Int32 { self == .output ? STDOUT_FILENO : STDERR_FILENO }

    /// Writes all of `text`, going on after an interrupted write; stops quietly when the
    /// stream is closed (a pipe whose reader went away), as a line that cannot be shown
    /// must not stop the work.
    public func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { raw in
                Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if written <= 0 {
                if written < 0 && errno == EINTR { continue }
                return
            }
            offset += written
        }
    }

    public var isTerminal: Bool { isatty(descriptor) == 1 }

    /// The terminal's width in columns; nil when the stream is not a terminal or says none.
    public var terminalColumns: Int? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}
