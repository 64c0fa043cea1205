import Glibc

/// Reads and writes on one end of a pipe, for threads that own it (exec plugins' standard
/// streams).
public enum PipeIO {
    /// What one read brought.
    public enum Read: Equatable, Sendable {
        case bytes(Int)
        /// Nothing now (interrupted, or nothing ready on a non-blocking end): read again.
        case again
        /// The other end is closed, or the pipe failed.
        case end
    }

    /// Makes reads on `descriptor` return at once when nothing is there.
    public static func makeNonBlocking(_ descriptor: Int32) {
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
    }

    /// Waits up to `milliseconds` for bytes (or the end) on `descriptor`: true when a read
    /// will not wait; false on a timeout or an interruption. Nil when the poll failed.
    public static func waitReadable(_ descriptor: Int32, milliseconds: Int32) -> Bool? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, milliseconds)
        if ready < 0 { return errno == EINTR ? false : nil }
        return ready > 0
    }

    /// Reads into `buffer` from its start.
    public static func read(_ descriptor: Int32, into buffer: inout [UInt8]) -> Read {
        let count = buffer.withUnsafeMutableBytes { raw in Glibc.read(descriptor, raw.baseAddress, raw.count) }
        if count < 0 { return errno == EINTR || errno == EAGAIN ? .again : .end }
        return count == 0 ? .end : .bytes(count)
    }

    /// Writes all of `bytes`, going on after interruptions; false when the pipe is broken.
    public static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let written = Glibc.write(descriptor, raw.baseAddress! + done, raw.count - done)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                done += written
            }
            return true
        }
    }

    public static func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }
}
