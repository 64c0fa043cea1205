import FerryConfig
import FerryCore
import FerryJournal
import FerryPluginAPI
import FerrySystem
import Foundation
import Logging

/// What every command needs before it does anything: the validated config, the backend
/// registry, the state folder and a logger. Loading it touches nothing on disk but the
/// config file, so a bad config leaves the journal alone.
struct CommandContext {
    let config: Config
    let registry: BackendRegistry
    /// The state folder, the only opener of its journal and run history in this process.
    let state: StateFolder
    var stateDirectory: String { state.directory }
    let currentDirectory: String
    let logger: Logger
    /// The one live clock of this process: what commands stamp in the journal and wait on.
    var clock: any FerryClock = SystemClock()

    static func load(_ options: GlobalOptions, logFormat: LogFormat = .text, quietLevel: Logger.Level = .warning) throws -> CommandContext {
        LogSetup.bootstrap(verbosity: options.verbose, format: logFormat, quietLevel: quietLevel)
        return try reload(options)
    }

    /// Reads the config again without touching logging (which is set up once per process):
    /// the daemon's SIGHUP.
    static func reload(_ options: GlobalOptions) throws -> CommandContext {
        let environment = ProcessInfo.processInfo.environment
        let currentDirectory = LocalFileSystem.currentDirectory
        let registry = BuiltinBackends.registry
        let loader = ConfigLoader(registry: registry)
        let config: Config
        do {
            if let path = options.config {
                guard (try? LocalFileSystem.metadataFollowingLinks(path)) != nil else {
                    throw CommandFailure.usage("config file \(path) not found; check --config")
                }
                config = try loader.load(file: path)
            } else if let found = ConfigLoader.defaultSearchPaths(environment: environment, currentDirectory: currentDirectory)
                .first(where: { (try? LocalFileSystem.metadataFollowingLinks($0)) != nil }) {
                config = try loader.load(file: found)
            } else {
                config = .defaults
            }
        } catch let error as ConfigError {
            throw CommandFailure.usage(error.description)
        }
        let stateDirectory = StateLocation.directory(
            commandLine: options.state, config: config, environment: environment, currentDirectory: currentDirectory)
        return CommandContext(config: config, registry: registry, state: StateFolder(directory: stateDirectory),
                              currentDirectory: currentDirectory, logger: Logger(label: "ferry"))
    }
}

extension CommandContext {
    /// The journal for a command that reads or amends what earlier runs recorded; before
    /// the first run there is none, and the command says so: `consequence` is what that
    /// means for it ("there is nothing to forget").
    func recordedJournal(else consequence: String) async throws -> Journal {
        guard let journal = try await state.existingJournal() else {
            throw CommandFailure.usage("nothing synced yet (no journal at \(state.journalPath)); \(consequence)")
        }
        return journal
    }

    /// What a person asks of the recorded folders (`FolderService`), for a command that
    /// amends what earlier runs recorded; `consequence` as for `recordedJournal`.
    func folderService(else consequence: String) async throws -> FolderService {
        FolderService(recorded: try await RecordedFolders(journal: recordedJournal(else: consequence)), clock: clock)
    }
}

enum LogSetup {
    /// Quiet by default (warnings and errors; `watch` and `daemon` also say what they run),
    /// `-v` info, `-vv` debug; always to stderr, as text or (`--log-format json`) JSON lines.
    static func bootstrap(verbosity: Int, format: LogFormat = .text, quietLevel: Logger.Level = .warning) {
        let level: Logger.Level = verbosity >= 2 ? .debug : verbosity == 1 ? min(.info, quietLevel) : quietLevel
        LoggingSystem.bootstrap { label in
            switch format {
            case .text:
                return TextLogHandler(logLevel: level)
            case .json:
                return JSONLogHandler(label: label, logLevel: level)
            }
        }
    }
}
