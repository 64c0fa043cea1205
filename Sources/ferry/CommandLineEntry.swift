import ArgumentParser
import Foundation

/// Runs the parsed command and maps every way out to Ferry's exit codes:
/// 0 all done, 1 some files failed, 2 usage or configuration error.
enum CommandLineEntry {
    static func run(_ arguments: [String]) async -> Int32 {
        do {
            var command = try Ferry.parseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return 0
        } catch let failure as CommandFailure {
            StandardStreams.error("ferry: \(failure.message)")
            return failure.exitCode
        } catch ExitCodeFailure.someFilesFailed {
            return 1
        } catch let exit as ExitCode {
            return exit.rawValue
        } catch {
            let code = Ferry.exitCode(for: error)
            let message = Ferry.fullMessage(for: error)
            if code == .success {
                StandardStreams.output(message)
                return 0
            }
            // ArgumentParser's "Error: …" becomes "ferry: …", as every other error reads.
            StandardStreams.error(message.hasPrefix("Error: ") ? "ferry: " + message.dropFirst("Error: ".count) : message)
            return 2
        }
    }
}

/// A command that failed as a whole, with its exit code and a one-line message.
struct CommandFailure: Error {
    var exitCode: Int32
    var message: String

    static func usage(_ message: String) -> CommandFailure { CommandFailure(exitCode: 2, message: message) }
    static func runtime(_ message: String) -> CommandFailure { CommandFailure(exitCode: 1, message: message) }
}
