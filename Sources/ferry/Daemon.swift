import ArgumentParser
import FerryCore
import FerryPluginAPI

extension Ferry {
    struct Daemon: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run every folder's watcher and every schedule in the background.",
            discussion: """
                Push folders are watched, pull folders polled, `schedule:` entries run when due.
                SIGTERM/SIGINT: stop at a resumable point and exit 0. SIGHUP: read config.yml again
                (an invalid one is reported and the running one kept). `ferry status` shows what it does.
                A systemd user unit and a guide are in docs/daemon.md.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var transfer: TransferOptions
        @OptionGroup var process: LongRunningOptions

        func run() async throws {
            let context = try CommandContext.load(global, logFormat: process.logFormat, quietLevel: process.logLevel.level)
            let options = try LongRunningCommand.options(transfer, command: "daemon")
            let runtime = try Self.runtime(context: context, options: options, json: global.json)
            let global = self.global
            let configPath = context.config.sourceFile
            try await LongRunningProcess.run(runtime, logger: context.logger) {
                var reloadOptions = global
                reloadOptions.config = configPath ?? global.config
                let fresh = try CommandContext.reload(reloadOptions)
                return try Self.runtime(context: fresh, options: options, json: global.json)
            }
        }

        static func runtime(context: CommandContext, options: RunOptions, json: Bool) throws -> DaemonRuntime {
            guard !context.config.folders.isEmpty else {
                let source = context.config.sourceFile.map { "in \($0)" } ?? "(no config.yml found)"
                throw CommandFailure.usage("no folder is configured \(source); the daemon runs configured folders only")
            }
            let selection = FolderSelection(config: context.config, registry: context.registry,
                                            currentDirectory: context.currentDirectory)
            var pairs: [FolderPair] = []
            do {
                for folder in context.config.folders {
                    pairs += try selection.resolve(folder: folder.name, remote: nil, mode: folder.mode)
                }
            } catch {
                throw CommandFailure.usage(error.message)
            }
            return LongRunningCommand.runtime(context: context, pairs: pairs, options: options, command: "daemon",
                                              json: json, schedules: true)
        }
    }
}
