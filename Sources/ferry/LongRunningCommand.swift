import FerryConfig
import FerryCore
import FerryEngine
import FerryDaemon
import FerryPluginAPI
import Foundation
import Logging

/// What `watch` and `daemon` share: the run options from the transfer flags, the event
/// output, and the runtime.
enum LongRunningCommand {
    static func options(_ transfer: TransferOptions, mirror: Bool, command: String) throws -> RunOptions {
        if transfer.dryRun {
            throw CommandFailure.usage("--dry-run does not go with \(command); use ferry push --dry-run to see a plan")
        }
        return try transfer.runOptions(mirror: mirror)
    }

    /// `--json`: run events as JSON lines on stdout; otherwise as log lines on stderr.
    static func sink(json: Bool, logger: Logger, config: Config) -> @Sendable (FolderPair) -> any RunEventSink {
        { pair in
            if json { return JSONEventPrinter() }
            var folderLogger = logger
            folderLogger[metadataKey: "folder"] = "\(pair.name)"
            let configured = config.folder(named: pair.name).flatMap { $0.localPath == pair.localRoot ? $0.remote : nil }
            return LogEventSink(logger: folderLogger, remote: PairLabel.remote(pair, config: config), location: pair.remoteLocation,
                                backend: pair.backend.displayName, remoteName: configured)
        }
    }

    /// A live table of the run under way, for a person at a terminal: not with `--json`
    /// or JSON logs (a program reads those), nor when either stream goes elsewhere.
    /// One line per folder on the terminal: what the process watches or polls.
    static func announce(_ pairs: [FolderPair], context: CommandContext, typedRemote: String? = nil) {
        for pair in pairs {
            let label = PairLabel.describe(pair, config: context.config, currentDirectory: context.currentDirectory,
                                           typedRemote: typedRemote)
            StandardStreams.error("\(pair.mode == .pull ? "polling" : "watching") \(label)")
        }
    }

    static func liveTable(json: Bool, textLogs: Bool) -> Bool {
        !json && textLogs && StandardStreams.outputIsTerminal && StandardStreams.errorIsTerminal
    }

    static func runtime(context: CommandContext, pairs: [FolderPair], options: RunOptions, command: String,
                        json: Bool, textLogs: Bool, schedules: Bool, control: ControlService? = nil) -> DaemonRuntime {
        var config = context.config
        if !schedules { config.schedules = [] }
        let selection = FolderSelection(config: config, registry: context.registry, currentDirectory: context.currentDirectory,
                                        stateDirectory: context.stateDirectory)
        return DaemonRuntime(config: config, selection: selection, pairs: pairs, state: context.state,
                             options: options, command: command, logger: context.logger, control: control,
                             liveRuns: liveTable(json: json, textLogs: textLogs) ? TerminalRunTable() : nil,
                             makeSink: sink(json: json, logger: context.logger, config: config))
    }
}
