import FerrySystem
import Foundation

/// Starts helper programs (server scripts, the fault proxy) through `SpawnedProcess`:
/// stdin from /dev/null, stdout and stderr to files, and a clean signal state, so that
/// they (and the servers they start) can be stopped with SIGTERM although a test runner's
/// threads block it. Their environment is `ChildEnvironment`'s.
enum ChildProcess {
    static func spawn(_ arguments: [String], output: String, error: String) throws -> pid_t {
        do {
            return try SpawnedProcess.spawn(arguments, environment: ChildEnvironment.variables,
                                            standardOutput: .file(output), standardError: .file(error)).pid
        } catch {
            throw TestServerError(message: "cannot run \(arguments.joined(separator: " ")): \(error.reason)")
        }
    }

    /// Waits for one child and returns its exit status (128 + signal when killed).
    static func wait(_ pid: pid_t) -> Int32 {
        SpawnedProcess.waitForExit(pid)
    }
}
