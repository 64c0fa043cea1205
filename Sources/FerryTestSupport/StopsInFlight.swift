import Foundation

/// Server stops and folder removals still running on their own threads. The process waits
/// for them when it exits (at most 30 s, a guard): a stop cut short leaves its server to the
/// start script's watcher and its scratch folder in the temporary folder.
enum StopsInFlight {
    private static let running = DispatchGroup()
    private static let waitAtExit: Void = { atexit { _ = StopsInFlight.running.wait(timeout: .now() + 30) } }()

    static func begin() {
        _ = waitAtExit
        running.enter()
    }

    static func end() {
        running.leave()
    }
}
