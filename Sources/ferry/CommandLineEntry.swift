import ArgumentParser
import FerryConfig
import FerryCore
import Foundation

/// Runs the parsed command and maps every way out to Ferry's exit codes:
/// 0 all done, 1 some files failed, 2 usage or configuration error.
enum CommandLineEntry {
    static func run(_ arguments: [String]) async -> Int32 {
        if let unknown = unknownCommand(arguments) {
            StandardStreams.error("ferry: \(unknown)")
            return 2
        }
        do {
            var command = try Ferry.parseAsRoot(pullVersionSpelt(arguments))
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

extension CommandLineEntry {
    /// `ferry pull FOLDER --version TIME`: the root command's `--version` flag would take
    /// the option (and TIME would become a path), so it goes to pull as `--as-of`.
    static func pullVersionSpelt(_ arguments: [String]) -> [String] {
        guard arguments.first == "pull" else { return arguments }
        var spelt = arguments
        for index in spelt.indices.dropFirst() {
            if spelt[index] == "--" { break }
            if spelt[index] == "--version" { spelt[index] = "--as-of" }
            if spelt[index].hasPrefix("--version=") { spelt[index] = "--as-of=" + spelt[index].dropFirst("--version=".count) }
        }
        return spelt
    }

    /// `ferry pul`: the first word names no command. ArgumentParser says only "Unexpected
    /// argument 'pul'"; this names the command meant, or lists them.
    static func unknownCommand(_ arguments: [String]) -> String? {
        guard let word = arguments.first, !word.hasPrefix("-") else { return nil }
        let names = Ferry.configuration.subcommands.map { $0._commandName } + ["help"]
        guard !names.contains(word) else { return nil }
        if let near = NearestName.among(names, for: word.lowercased()) {
            return "unknown command '\(word)'; did you mean 'ferry \(near)'?"
        }
        return "unknown command '\(word)'; commands: \(names.filter { $0 != "help" }.joined(separator: ", ")) (ferry --help)"
    }
}

/// A command that failed as a whole, with its exit code and a one-line message.
struct CommandFailure: Error {
    var exitCode: Int32
    var message: String

    static func usage(_ message: String) -> CommandFailure { CommandFailure(exitCode: 2, message: message) }
    static func runtime(_ message: String) -> CommandFailure { CommandFailure(exitCode: 1, message: message) }
}
