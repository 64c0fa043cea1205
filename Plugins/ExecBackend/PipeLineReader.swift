import Foundation
import Synchronization

/// What a reader thread found on a pipe.
enum PipeLine: Sendable {
    case line([UInt8])
    /// A line longer than the limit; the rest of the stream is not read.
    case tooLong(prefix: [UInt8])
    /// The other end closed the pipe (or a read failed).
    case end
}

/// Reads newline-delimited text from a pipe on a thread of its own and hands the lines
/// out, in order, as an `AsyncStream`.
///
/// The descriptor is made non-blocking and polled with a short timeout, so the thread
/// notices `stop()` even when the other end never writes or closes (a hung plugin whose
/// own child still holds the pipe). The thread closes the descriptor when it ends.
final class PipeLineReader: Sendable {
    let lines: AsyncStream<PipeLine>
    private let stopped = Atomic<Bool>(false)
    private let produced = Atomic<Int>(0)

    /// Lines handed to the stream so far (whether or not anyone has taken them yet).
    var linesProduced: Int { produced.load(ordering: .acquiring) }

    init(descriptor: Int32, maxLineBytes: Int, name: String) {
        let (stream, continuation) = AsyncStream<PipeLine>.makeStream(bufferingPolicy: .unbounded)
        lines = stream
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        let thread = Thread { [self] in
            readLoop(descriptor, maxLineBytes: maxLineBytes, continuation: continuation)
            close(descriptor)
        }
        thread.name = name
        thread.start()
    }

    /// Asks the thread to end at its next poll, whatever the pipe does.
    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    private func readLoop(_ descriptor: Int32, maxLineBytes: Int, continuation: AsyncStream<PipeLine>.Continuation) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while !stopped.load(ordering: .relaxed) {
            let ready = poll(&poller, 1, 250)
            if ready < 0 && errno != EINTR { break }
            if ready <= 0 { continue }
            let count = buffer.withUnsafeMutableBytes { raw in read(descriptor, raw.baseAddress, raw.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                break
            }
            if count == 0 { break }
            var start = 0
            for index in 0..<count where buffer[index] == 0x0A {
                pending.append(contentsOf: buffer[start..<index])
                produced.add(1, ordering: .releasing)
                continuation.yield(.line(pending))
                pending.removeAll(keepingCapacity: true)
                start = index + 1
            }
            pending.append(contentsOf: buffer[start..<count])
            if pending.count > maxLineBytes {
                continuation.yield(.tooLong(prefix: Array(pending.prefix(200))))
                continuation.finish()
                return
            }
        }
        if !pending.isEmpty { continuation.yield(.line(pending)) }
        continuation.yield(.end)
        continuation.finish()
    }
}
