import FerryTestSupport
import Foundation
import Testing

/// A scratch workspace with `src/`, `dst/` and `state/` for one end-to-end test.
struct Workspace {
    let directory = TemporaryDirectory("ferry-e2e")
    var source: String { directory.child("src") }
    var destination: String { directory.child("dst") }
    var state: String { directory.child("state") }

    func ferry(_ arguments: [String], environment: [String: String] = [:]) async throws -> FerryProcess.Result {
        try await FerryProcess.run(arguments, in: directory.path, environment: environment)
    }

    func push(_ extra: [String] = []) async throws -> FerryProcess.Result {
        try await ferry(["push", source, "--to", destination, "--state", state, "--json"] + extra)
    }

    /// A remote named `name`, as YAML lines under `remotes:`: the exec test plugin `faulty`
    /// in front of the content store in `store/`, holding the transfers of `hold` (when
    /// given) until the test writes `release` into the workspace's folder (it writes `held`
    /// there when it holds one): a transfer stopped at a known point, whatever the
    /// machine's speed. Held transfers say nothing for as long as a test looks, so no stall
    /// is declared.
    func heldStoreRemote(_ name: String, hold: String?) -> String {
        let root = TestServer.repositoryRoot
        return """
              \(name):
                type: exec:faulty
                plugin_dir: \(root)/scripts/test-plugins
                inner: \(root)/Plugins/ContentStorePlugin/ferry-backend-cas
                path: store
                fault_state: \(directory.path)
                stall_timeout: 3600

            """ + (hold.map { "    hold: \($0)\n" } ?? "")
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

/// Runs `action` on a thread of its own as soon as `condition` holds (polled every 10 ms;
/// 300 s is only a guard against a hang), and returns once it ran: true, or false (and an
/// issue recorded) when the condition never held.
///
/// Both the polling and the action happen on that thread. A test resumed on Swift's
/// cooperative pool (two threads on this machine) can be held back for tens of seconds by
/// other tests' synchronous work, and a Dispatch worker can wait that long for a free
/// thread under a full-suite load: long enough for the transfer that was to be interrupted
/// to finish first. A dedicated thread acts the moment the condition holds.
@discardableResult
func when(_ condition: @escaping @Sendable () -> Bool, do action: @escaping @Sendable () -> Void = {}) async -> Bool {
    let reached = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        Thread.detachNewThread {
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
    return reached
}
