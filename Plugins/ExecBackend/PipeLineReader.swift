import FerrySystem
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
///
/// Back-pressure: at most `maxQueuedLines` lines (and `maxQueuedBytes` bytes) wait to be
/// taken; the thread stops reading until the consumer `release`s one, so the pipe fills
/// and a plugin that floods lines faster than Ferry handles them is made to wait, instead
/// of growing Ferry's memory (3 million short lines held 300 MB before).
final class PipeLineReader: Sendable {
    static let maxQueuedLines = 1024
    static let maxQueuedBytes = 8 << 20

    let lines: AsyncStream<PipeLine>
    private let stopped = Atomic<Bool>(false)
    private let produced = Atomic<Int>(0)
    private let limits: (lines: Int, bytes: Int)
    /// Lines handed out and not yet released, their bytes, and the most lines ever waiting.
    private let queue = Mutex<(lines: Int, bytes: Int, peak: Int)>((0, 0, 0))
    /// Wakes the reader thread when the consumer releases a line.
    private let space = NSCondition()

    /// Lines handed to the stream so far (whether or not anyone has taken them yet).
    var linesProduced: Int { produced.load(ordering: .acquiring) }

    /// The most lines that were ever waiting to be taken at once.
    var peakQueuedLines: Int { queue.withLock { $0.peak } }

    init(descriptor: Int32, maxLineBytes: Int, name: String,
         maxQueuedLines: Int = PipeLineReader.maxQueuedLines, maxQueuedBytes: Int = PipeLineReader.maxQueuedBytes) {
        let (stream, continuation) = AsyncStream<PipeLine>.makeStream(bufferingPolicy: .unbounded)
        lines = stream
        limits = (max(1, maxQueuedLines), max(1, maxQueuedBytes))
        PipeIO.makeNonBlocking(descriptor)
        let thread = Thread { [self] in
            readLoop(descriptor, maxLineBytes: maxLineBytes, continuation: continuation)
            PipeIO.close(descriptor)
        }
        thread.name = name
        thread.start()
    }

    /// The consumer is done with a line it took: room for the next one.
    func release(_ event: PipeLine) {
        guard case let .line(bytes) = event else { return }
        space.lock()
        queue.withLock { queue in
            queue.lines -= 1
            queue.bytes -= bytes.count
        }
        space.signal()
        space.unlock()
    }

    /// Hands a line out once there is room for it (a line larger than the byte bound goes
    /// alone); false when the reader was stopped while waiting.
    private func hand(_ bytes: [UInt8], to continuation: AsyncStream<PipeLine>.Continuation) -> Bool {
        space.lock()
        while !stopped.load(ordering: .relaxed) {
            let fits = queue.withLock { queue in
                queue.lines < limits.lines && (queue.lines == 0 || queue.bytes + bytes.count <= limits.bytes)
            }
            if fits { break }
            // A stop is noticed within a quarter of a second, even if no release comes.
            _ = space.wait(until: Date(timeIntervalSinceNow: 0.25))
        }
        let handed = !stopped.load(ordering: .relaxed)
        if handed {
            queue.withLock { queue in
                queue.lines += 1
                queue.bytes += bytes.count
                queue.peak = max(queue.peak, queue.lines)
            }
        }
        space.unlock()
        guard handed else { return false }
        produced.add(1, ordering: .releasing)
        continuation.yield(.line(bytes))
        return true
    }

    /// Asks the thread to end at its next poll, whatever the pipe does.
    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    private func readLoop(_ descriptor: Int32, maxLineBytes: Int, continuation: AsyncStream<PipeLine>.Continuation) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        reading: while !stopped.load(ordering: .relaxed) {
            guard let ready = PipeIO.waitReadable(descriptor, milliseconds: 250) else { break }
            if !ready { continue }
            let count: Int
            switch PipeIO.read(descriptor, into: &buffer) {
            case let .bytes(read): count = read
            case .again: continue reading
            case .end: break reading
            }
            var start = 0
            for index in 0..<count where buffer[index] == 0x0A {
                pending.append(contentsOf: buffer[start..<index])
                guard hand(pending, to: continuation) else { break }
                pending.removeAll(keepingCapacity: true)
                start = index + 1
            }
            if stopped.load(ordering: .relaxed) { break }
            pending.append(contentsOf: buffer[start..<count])
            if pending.count > maxLineBytes {
                continuation.yield(.tooLong(prefix: Array(pending.prefix(200))))
                continuation.finish()
                return
            }
        }
        if !pending.isEmpty, !stopped.load(ordering: .relaxed) { _ = hand(pending, to: continuation) }
        continuation.yield(.end)
        continuation.finish()
    }
}
