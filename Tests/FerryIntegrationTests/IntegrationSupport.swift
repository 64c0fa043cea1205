import FerryTestSupport
import Foundation
import Testing

/// A scratch workspace with `src/`, `dst/` and `state/` for one end-to-end test.
struct Workspace {
    let directory = TemporaryDirectory("ferry-e2e")
    var source: String { directory.child("src") }
    var destination: String { directory.child("dst") }
    var state: String { directory.child("state") }

    func ferry(_ arguments: [String]) async throws -> FerryProcess.Result {
        try await FerryProcess.run(arguments, in: directory.path)
    }

    func push(_ extra: [String] = []) async throws -> FerryProcess.Result {
        try await ferry(["push", source, "--to", destination, "--state", state, "--json"] + extra)
    }

    /// Names of files that Ferry writes while a transfer is in progress.
    func temporaryFiles(in root: String) throws -> [String] {
        try TreeComparison.files(in: root).keys.filter { $0.hasSuffix(".ferry-part") }.sorted()
    }
}

extension FerryProcess.Result {
    func int(_ key: String) -> Int? {
        (summary?[key] as? NSNumber)?.intValue
    }

    var transferredPaths: [String] {
        events(named: "transferred").compactMap { $0["path"] as? String }
    }

    /// For messages when an expectation fails.
    var diagnostics: String {
        "exit \(status)\nstderr: \(standardError.suffix(2000))\nstdout: \(standardOutput.suffix(2000))"
    }
}

/// Runs `action` on a Dispatch thread as soon as `condition` holds (polled every 10 ms; 300 s
/// is only a guard against a hang, generous for a loaded machine), and returns once it ran. Acting on the polling thread, rather than after the
/// test resumes, keeps the moment of a kill or a server stop independent of Swift's
/// cooperative pool, where other tests' work can hold a resumed test back for seconds:
/// long enough for the transfer that was to be interrupted to finish first.
func when(_ condition: @escaping @Sendable () -> Bool, do action: @escaping @Sendable () -> Void = {}) async {
    let reached = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        DispatchQueue.global().async {
            for _ in 0..<30_000 {
                if condition() {
                    action()
                    continuation.resume(returning: true)
                    return
                }
                usleep(10_000)
            }
            continuation.resume(returning: false)
        }
    }
    if !reached { Issue.record("condition not reached within 300 s") }
}
