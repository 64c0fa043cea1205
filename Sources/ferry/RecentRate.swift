/// A queue's transfer rate for the display: over the last `window` seconds while it runs
/// (so an outage or a slow start does not weigh on the ETA for the rest of the run), and
/// its average from first byte to last once it is finished (a finished queue's rate
/// would otherwise fall toward zero). Pure: times are given, not read.
struct RecentRate: Equatable {
    var window: Double = 10
    private var samples: [(seconds: Double, bytes: Int64)] = []
    private var firstMoved: (seconds: Double, bytes: Int64)?
    private var lastMoved: (seconds: Double, bytes: Int64)?
    private var finalRate: Double?

    init(window: Double = 10) {
        self.window = window
    }

    static func == (lhs: RecentRate, rhs: RecentRate) -> Bool {
        lhs.window == rhs.window && lhs.finalRate == rhs.finalRate && lhs.samples.count == rhs.samples.count
    }

    /// Records the queue's bytes at `seconds`; returns the rate to show (nil: nothing to say yet).
    mutating func record(seconds: Double, bytes: Int64, finished: Bool) -> Double? {
        if let finalRate { return finalRate }
        if let last = samples.last, bytes != last.bytes {
            if firstMoved == nil { firstMoved = last }
            lastMoved = (seconds, bytes)
        }
        samples.append((seconds, bytes))
        samples.removeAll { $0.seconds < seconds - window }
        if finished {
            guard let first = firstMoved, let last = lastMoved, last.seconds > first.seconds else { return nil }
            finalRate = Double(last.bytes - first.bytes) / (last.seconds - first.seconds)
            return finalRate
        }
        guard let oldest = samples.first, seconds - oldest.seconds >= 1 else { return nil }
        return max(0, Double(bytes - oldest.bytes) / (seconds - oldest.seconds))
    }
}
