import FerryEngine
import FerryJournal

/// The figures of one run, gathered from its events and from samples of its progress:
/// what the run history keeps per run and what the daemon exports as metrics. Pure: time
/// is passed in (seconds since 1970).
public struct RunTally: Sendable {
    /// Files and bytes moved in one queue and direction, as the run history keeps them.
    public typealias Moved = RunRecord.Moved

    public let startedAt: Double
    public private(set) var moved: [Moved] = []
    public private(set) var conflicts = 0
    /// Attempts that failed and were queued again (timeouts, 5xx, lost connections).
    public private(set) var retriedFailures = 0
    /// Files that failed for good in this run (permission denied, invalid name, attempts used up).
    public private(set) var permanentFailures = 0
    /// Bytes an interrupted transfer did not send again.
    public private(set) var resumedBytes: Int64 = 0
    /// Seconds the remote did not answer during the run.
    public private(set) var offlineSeconds: Double = 0
    /// The highest rate between two progress samples at least a second apart (bytes/s).
    public private(set) var peakBytesPerSecond: Double = 0

    private var offlineSince: Double?
    private var lastSample: (time: Double, bytes: Int64)?

    public init(startedAt: Double) {
        self.startedAt = startedAt
    }

    public mutating func add(_ event: RunEvent, at time: Double) {
        switch event {
        case let .transferred(_, queue, direction, bytes, resumedFrom):
            count(queue: queue, direction: direction == .download ? "download" : "upload", bytes: bytes)
            resumedBytes += resumedFrom
        case let .deleted(_, queue, side):
            count(queue: queue, direction: side == .deleteLocal ? "delete-local" : "delete-remote", bytes: 0)
        case let .failed(_, _, _, willRetry, _):
            if willRetry { retriedFailures += 1 } else { permanentFailures += 1 }
        case .conflict:
            conflicts += 1
        case .remoteOffline:
            if offlineSince == nil { offlineSince = time }
        case let .remoteOnline(_, seconds):
            offlineSeconds += offlineSince.map { max(0, time - $0) } ?? seconds
            offlineSince = nil
        case .planned, .moved, .skipped, .evicted, .waitingForWriteLease, .summary:
            break
        }
    }

    /// The run's bytes done so far (all queues), read about once a second.
    public mutating func sample(bytesDone: Int64, at time: Double) {
        guard let last = lastSample else {
            lastSample = (time, bytesDone)
            return
        }
        guard time - last.time >= 1 else { return }
        peakBytesPerSecond = max(peakBytesPerSecond, Double(max(0, bytesDone - last.bytes)) / (time - last.time))
        lastSample = (time, bytesDone)
    }

    /// Closes the run: an outage still open counts until the end, and a run too short for
    /// two samples gets its average rate as its peak.
    public mutating func finish(at time: Double) {
        if let since = offlineSince {
            offlineSeconds += max(0, time - since)
            offlineSince = nil
        }
        let bytes = moved.reduce(0) { $0 + $1.bytes }
        if peakBytesPerSecond == 0, bytes > 0, time > startedAt {
            peakBytesPerSecond = Double(bytes) / (time - startedAt)
        }
    }

    private mutating func count(queue: String, direction: String, bytes: Int64) {
        if let index = moved.firstIndex(where: { $0.queue == queue && $0.direction == direction }) {
            moved[index].files += 1
            moved[index].bytes += bytes
        } else {
            moved.append(Moved(queue: queue, direction: direction, files: 1, bytes: bytes))
        }
    }
}
