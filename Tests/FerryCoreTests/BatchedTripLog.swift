import Synchronization

/// What a test backend's batched trips carried (the paths of each trip, in order), and
/// one path whose first attempt fails, as a transfer cut short would.
final class BatchedTripLog: Sendable {
    let failOnce: String
    private let recorded = Mutex<[[String]]>([])
    private let failed = Mutex(false)

    init(failOnce: String) {
        self.failOnce = failOnce
    }

    var trips: [[String]] { recorded.withLock { $0 } }

    func record(_ paths: [String]) {
        recorded.withLock { $0.append(paths) }
    }

    /// True the first time it is asked about `failOnce`, false ever after and for others.
    func failsNow(_ path: String) -> Bool {
        path == failOnce && failed.withLock { failed in
            defer { failed = true }
            return !failed
        }
    }
}
