import FerryTestSupport
import Foundation
import Testing

@testable import ExecBackend

/// A plugin that writes lines faster than Ferry handles them waits on its full pipe: the
/// reader holds a bounded number of lines, whatever the plugin writes.
@Suite("plugin output back-pressure")
struct PipeBackPressureTests {
    /// Writes `count` lines of `length` bytes (plus the newline) into a pipe from a thread
    /// of its own, then closes it; returns the reader of the other end.
    static func flood(count: Int, length: Int, maxLines: Int, maxBytes: Int) -> PipeLineReader {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        let reader = PipeLineReader(descriptor: ends[0], maxLineBytes: 1 << 20, name: "test-flood",
                                    maxQueuedLines: maxLines, maxQueuedBytes: maxBytes)
        let writeEnd = ends[1]
        Thread.detachNewThread {
            let line = [UInt8](repeating: UInt8(ascii: "x"), count: length) + [0x0A]
            let batch = Array([[UInt8]](repeating: line, count: max(1, 65_536 / line.count)).joined())
            var left = count
            while left > 0 {
                let lines = min(left, batch.count / line.count)
                var offset = 0
                let bytes = lines * line.count
                while offset < bytes {
                    let written = batch.withUnsafeBytes { write(writeEnd, $0.baseAddress! + offset, bytes - offset) }
                    if written <= 0 { break }
                    offset += written
                }
                left -= lines
            }
            close(writeEnd)
        }
        return reader
    }

    /// Takes every line once the reader has handed out `full` lines and is waiting for
    /// room (the consumer is the slow side), releasing each.
    static func drain(_ reader: PipeLineReader, after full: Int) async -> Int {
        await onOwnThread {
            // 60 s is a guard against a hang.
            for _ in 0..<60_000 where reader.linesProduced < full { usleep(1000) }
        }
        var count = 0
        for await event in reader.lines {
            if case .line = event { count += 1 }
            reader.release(event)
        }
        return count
    }

    @Test("100,000 short lines arrive in full, never more than the bound waiting")
    func shortLines() async {
        let reader = Self.flood(count: 100_000, length: 12, maxLines: 64, maxBytes: 1 << 20)
        #expect(await Self.drain(reader, after: 64) == 100_000)
        #expect(reader.peakQueuedLines == 64)
    }

    @Test("long lines are bounded by bytes")
    func longLines() async {
        let reader = Self.flood(count: 200, length: 100_000, maxLines: 1024, maxBytes: 1 << 20)
        #expect(await Self.drain(reader, after: 10) == 200)
        #expect(reader.peakQueuedLines <= 10)
    }
}
