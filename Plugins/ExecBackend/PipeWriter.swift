import Dispatch
import FerrySystem
import Foundation
import Synchronization

/// Writes lines to a plugin's stdin from a thread of its own, in order.
///
/// Writes block while the pipe is full (a plugin that stops reading), so they never run on
/// Swift's cooperative pool. The thread blocks SIGPIPE for itself: writing to a plugin that
/// died then fails with EPIPE instead of killing Ferry, without changing the signal
/// disposition of the whole process.
final class PipeWriter: Sendable {
    private struct State {
        var queue: [Data] = []
        var closing = false
        var broken = false
    }

    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)

    init(descriptor: Int32, name: String) {
        let thread = Thread { [self] in
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            writeLoop(descriptor)
            PipeIO.close(descriptor)
        }
        thread.name = name
        thread.start()
    }

    /// Queues a line; false once the pipe is closed or broken.
    @discardableResult
    func send(_ data: Data) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.closing && !state.broken else { return false }
            state.queue.append(data)
            return true
        }
        if accepted { wakeUp.signal() }
        return accepted
    }

    /// Closes stdin once the queued lines are written: the plugin sees end of input.
    func finish() {
        state.withLock { $0.closing = true }
        wakeUp.signal()
    }

    /// Drops what is queued and closes at once (the plugin is being killed).
    func abandon() {
        state.withLock {
            $0.queue.removeAll()
            $0.closing = true
        }
        wakeUp.signal()
    }

    private func writeLoop(_ descriptor: Int32) {
        while true {
            wakeUp.wait()
            while true {
                let next = state.withLock { state -> Data? in
                    state.queue.isEmpty ? nil : state.queue.removeFirst()
                }
                guard let next else { break }
                if !writeAll(next, to: descriptor) {
                    state.withLock {
                        $0.broken = true
                        $0.queue.removeAll()
                    }
                    return
                }
            }
            if state.withLock({ $0.closing && $0.queue.isEmpty }) { return }
        }
    }

    private func writeAll(_ data: Data, to descriptor: Int32) -> Bool {
        PipeIO.writeAll([UInt8](data), to: descriptor)
    }
}
