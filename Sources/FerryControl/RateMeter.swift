import Synchronization

/// Bytes per second of each folder's run under way, over the last ten seconds of samples,
/// and the time left at that rate. Samples are taken whenever a status is built.
final class RateMeter: Sendable {
    private struct Sample {
        var time: Double
        var bytes: Int64
    }

    private let samples = Mutex<[String: [Sample]]>([:])
    static let window: Double = 10

    /// Records `bytesDone` of `folder`'s run at `time` and returns the rate (nil until two
    /// samples a moment apart exist). A run that starts again (fewer bytes) starts afresh.
    func rate(folder: String, bytesDone: Int64, at time: Double) -> Double? {
        samples.withLock { all in
            var list = all[folder] ?? []
            if let last = list.last, bytesDone < last.bytes { list = [] }
            if list.last.map({ time - $0.time >= 0.2 }) ?? true { list.append(Sample(time: time, bytes: bytesDone)) }
            list.removeAll { time - $0.time > Self.window }
            all[folder] = list
            guard let first = list.first, let last = list.last, last.time - first.time >= 0.5 else { return nil }
            return Double(last.bytes - first.bytes) / (last.time - first.time)
        }
    }

    func forget(folder: String) {
        _ = samples.withLock { $0.removeValue(forKey: folder) }
    }
}
