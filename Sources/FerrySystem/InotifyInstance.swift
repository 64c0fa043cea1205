import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The one place Ferry talks to inotify: an instance (`inotify_init1`), its watches
/// (`inotify_add_watch`/`inotify_rm_watch`), and a reader thread that turns what `read`
/// returns into `InotifyEvent` batches. The read blocks, so it runs on its own thread and
/// never on the cooperative pool; it wakes every `pollInterval` to notice `stop()`.
public final class InotifyInstance: Sendable {
    /// Why a folder could not be watched.
    public enum WatchFailure: Error, Sendable, Equatable {
        /// `fs.inotify.max_user_watches` is reached (ENOSPC).
        case watchLimit
        /// The folder vanished or cannot be read.
        case unavailable(String)
    }

    private let descriptor: Int32
    /// Who may use and close the descriptor. A stop that comes before the reader thread has
    /// started closes it at once and the thread is never started; once the thread reads, only
    /// the thread closes it. Closing it twice (the stop and a reader started just after it)
    /// closed whatever file had been given the same number meanwhile: a journal's WAL.
    private enum State { case idle, reading, stopping, closed }
    private let state = Mutex(State.idle)
    static let pollInterval: Int32 = 200

    public init() throws(SystemError) {
        let fd = inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK))
        guard fd >= 0 else {
            let code = errno
            throw SystemError(code, code == EMFILE
                ? "cannot start watching: the inotify instance limit is reached (raise fs.inotify.max_user_instances)"
                : "cannot start watching", path: "inotify")
        }
        descriptor = fd
    }

    /// Watches one folder (not its subfolders: inotify is not recursive).
    public func addWatch(_ path: String, mask: InotifyEvent.Mask = .folderChanges) -> Result<Int32, WatchFailure> {
        let (watch, code): (Int32, Int32) = state.withLock { state in
            guard state != .closed else { return (-1, EBADF) }
            let watch = inotify_add_watch(descriptor, path, mask.rawValue)
            return (watch, errno)
        }
        if watch >= 0 { return .success(watch) }
        if code == ENOSPC { return .failure(.watchLimit) }
        return .failure(.unavailable(String(cString: strerror(code))))
    }

    public func removeWatch(_ watch: Int32) {
        state.withLock { state in
            if state != .closed { _ = inotify_rm_watch(descriptor, watch) }
        }
    }

    /// Event batches as the kernel delivers them, until `stop()`. Call once.
    public func events() -> AsyncStream<[InotifyEvent]> {
        let (stream, continuation) = AsyncStream<[InotifyEvent]>.makeStream()
        let start = state.withLock { state in
            guard state == .idle else { return false }
            state = .reading
            return true
        }
        guard start else {
            continuation.finish()
            return stream
        }
        let thread = Thread { [self] in
            self.readLoop(continuation)
        }
        thread.name = "ferry-inotify"
        thread.start()
        return stream
    }

    /// Ends the event stream and closes the instance (within `pollInterval`).
    public func stop() {
        state.withLock { state in
            switch state {
            case .idle:
                state = .closed
                close(descriptor)
            case .reading: state = .stopping
            case .stopping, .closed: break
            }
        }
    }

    private func readLoop(_ continuation: AsyncStream<[InotifyEvent]>.Continuation) {
        // Room for many events at once: a burst is read in few calls.
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while state.withLock({ $0 == .reading }) {
            var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, Self.pollInterval)
            if ready <= 0 { continue }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                break
            }
            if count == 0 { continue }
            continuation.yield(InotifyEventDecoder.decode(Array(buffer[0..<count])))
        }
        state.withLock { state in
            state = .closed
            close(descriptor)
        }
        continuation.finish()
    }
}
