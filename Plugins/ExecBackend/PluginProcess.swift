import FerryPluginAPI
import FerrySystem
import Foundation

/// A running plugin executable with its three standard streams on pipes
/// (`SpawnedProcess`), in a process group of its own, so that `terminate` also ends
/// anything it started.
final class PluginProcess: Sendable {
    private let process: SpawnedProcess
    /// Ferry's ends of the plugin's stdin, stdout and stderr.
    let input: Int32
    let output: Int32
    let errorOutput: Int32

    var pid: Int32 { process.pid }

    private init(process: SpawnedProcess, input: Int32, output: Int32, errorOutput: Int32) {
        self.process = process
        self.input = input
        self.output = output
        self.errorOutput = errorOutput
    }

    static func spawn(_ executable: String, environment: [String: String]) throws(BackendError) -> PluginProcess {
        // A plugin runs as you: one that another user can change is theirs to run.
        if let reason = FileTrust.distrust(path: executable, environment: ProcessInfo.processInfo.environment) {
            throw BackendError(.permissionDenied, "refusing to run plugin \(executable): \(reason); run chmod go-w on it and its "
                + "folder, or set \(FileTrust.overrideVariable)=1 to run it anyway", retryable: false)
        }
        let process: SpawnedProcess
        do {
            // Only what the plugin's remote needs, never Ferry's whole environment.
            process = try SpawnedProcess.spawn([executable], environment: environment, standardInput: .pipe,
                                               standardOutput: .pipe, standardError: .pipe, ownProcessGroup: true)
        } catch {
            throw BackendError(.unreachable, "cannot start plugin \(executable)", cause: error.reason,
                               retryable: !error.isNotExecutable)
        }
        guard let input = process.input, let output = process.output, let errorOutput = process.errorOutput else {
            process.kill()
            throw BackendError(.io, "cannot start plugin \(executable)", cause: "its pipes were not made")
        }
        return PluginProcess(process: process, input: input, output: output, errorOutput: errorOutput)
    }

    /// Kills the plugin and everything in its process group at once.
    func terminate() {
        process.kill()
    }

    /// How the process ended, once it has: waits up to `grace` for it to exit by itself,
    /// then kills it. Blocks the calling thread (run it through `BlockingIO`).
    func reap(grace: Duration) -> String {
        process.reap(grace: grace)
    }
}
