import Foundation
import Synchronization

/// Server stops still running on their own threads. The process waits for them when it
/// exits (at most 30 s, a guard): a stop cut short leaves its server to the start script's
/// watcher and its scratch folder in the temporary folder.
enum StopsInFlight {
    private static let count = Mutex<Int>(0)
    private static let waitAtExit: Void = { atexit { StopsInFlight.waitForAll() } }()

    static func begin() {
        _ = waitAtExit
        count.withLock { $0 += 1 }
    }

    static func end() {
        count.withLock { $0 -= 1 }
    }

    private static func waitForAll() {
        for _ in 0..<3_000 where count.withLock({ $0 }) > 0 { usleep(10_000) }
    }
}
