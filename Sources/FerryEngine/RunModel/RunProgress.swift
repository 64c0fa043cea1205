import Synchronization

/// Live counters of a run, per queue, read by the progress display while transfers update them.
public final class RunProgress: Sendable {
    public struct QueueProgress: Sendable, Equatable {
        public var queue: String
        public var rank: Int
        public var filesTotal = 0
        public var filesDone = 0
        public var filesFailed = 0
        public var bytesTotal: Int64 = 0
        public var bytesDone: Int64 = 0
        public var active = 0
        /// Paths being transferred right now, oldest first (for the display's "now:" column).
        public var current: [String] = []
    }

    private let state = Mutex<[String: QueueProgress]>([:])
    public let started = ContinuousClock.now

    public init() {}

    public func expect(queue: String, rank: Int, files: Int, bytes: Int64) {
        state.withLock { queues in
            var progress = queues[queue] ?? QueueProgress(queue: queue, rank: rank)
            progress.filesTotal += files
            progress.bytesTotal += bytes
            queues[queue] = progress
        }
    }

    public func began(queue: String) {
        state.withLock { $0[queue]?.active += 1 }
    }

    /// A job started: counts it as active and names it as a current file until `left`.
    public func began(queue: String, path: String) {
        state.withLock { queues in
            queues[queue]?.active += 1
            queues[queue]?.current.append(path)
        }
    }

    /// The job on `path` is no longer running (whatever its outcome).
    public func left(queue: String, path: String) {
        state.withLock { queues in
            if let index = queues[queue]?.current.firstIndex(of: path) {
                queues[queue]?.current.remove(at: index)
            }
        }
    }

    public func moved(queue: String, bytes: Int) {
        state.withLock { $0[queue]?.bytesDone += Int64(bytes) }
    }

    /// A job ended; `skippedBytes` are the bytes that did not need to move (a resumed prefix).
    public func ended(queue: String, succeeded: Bool, skippedBytes: Int64 = 0, final: Bool = true) {
        state.withLock { queues in
            guard var progress = queues[queue] else { return }
            progress.active -= 1
            progress.bytesDone += skippedBytes
            if final {
                if succeeded { progress.filesDone += 1 } else { progress.filesFailed += 1 }
            }
            queues[queue] = progress
        }
    }

    /// A job whose attempt already ended failed for good, or was handed back for a later run.
    public func countFailure(queue: String) {
        state.withLock { $0[queue]?.filesFailed += 1 }
    }

    /// Takes back bytes counted for an attempt that will be retried from zero.
    public func rewind(queue: String, bytes: Int64) {
        state.withLock { $0[queue]?.bytesDone -= bytes }
    }

    public func snapshot() -> [QueueProgress] {
        state.withLock { Array($0.values) }.sorted { $0.rank < $1.rank }
    }
}
