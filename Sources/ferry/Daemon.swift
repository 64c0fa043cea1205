import ArgumentParser
import FerryControl
import FerryCore
import FerryEngine
import FerryDaemon
import FerryPluginAPI

extension Ferry {
    struct Daemon: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "daemon",
            abstract: "Run every folder's watcher and every schedule, in the foreground, until stopped.",
            discussion: """
                Runs in the foreground until stopped (start it from systemd, see docs/daemon.md): \
                push folders are watched, pull folders polled, schedule entries run when due.

                Ctrl-C or SIGTERM: stop at a resumable point and exit 0. \
                SIGHUP: read config.yml again (an invalid one is reported and the running one kept).

                `ferry status` shows what it does.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var transfer: TransferOptions
        @OptionGroup var mirror: MirrorOption
        @OptionGroup var process: LongRunningOptions

        func run() async throws {
            let context = try CommandContext.load(global, logFormat: process.logFormat, quietLevel: process.logLevel.level)
            let options = try LongRunningCommand.options(transfer, mirror: mirror.delete, command: "daemon")
            // The control API: one server, event log, set of pauses and metrics registry for
            // the process; a reload hands the server the new runtime through the slot, so its
            // listeners, event streams and clients stay.
            let metrics = MetricsExporter.bootstrap()
            let logger = context.logger
            let clock = context.clock
            let control = ControlService(events: DaemonEventLog(clock: clock), pauses: DaemonPauses(),
                                         slot: DaemonControlSlot(clock: clock), clock: clock)
            let server = ControlServer(stateDirectory: context.stateDirectory, settings: context.config.control, logger: logger,
                                       metrics: metrics, version: Ferry.version)
            let textLogs = process.logFormat == .text
            let runtime = try Self.runtime(context: context, options: options, json: global.json, textLogs: textLogs,
                                           control: control)
            let global = self.global
            let configPath = context.config.sourceFile
            let announces = !global.json && process.logFormat == .text
            if announces {
                LongRunningCommand.announce(runtime.pairs, context: context)
                let schedules = context.config.schedules.count
                StandardStreams.error("daemon running, \(Plural.count(schedules, "schedule")); ferry status shows it; Ctrl-C stops it")
            }
            defer { if announces { StandardStreams.errorAfterInterrupt("daemon stopped") } }
            defer {
                control.slot.close()
                control.events.close()
            }
            let listening = context.config.control
            try await LongRunningProcess.run(runtime, logger: context.logger, beside: { await server.serve(control.slot) }) {
                var reloadOptions = global
                reloadOptions.config = configPath ?? global.config
                let fresh = try CommandContext.reload(reloadOptions)
                let runtime = try Self.runtime(context: fresh, options: options, json: global.json, textLogs: textLogs,
                                               control: control)
                if fresh.config.control != listening {
                    logger.warning("daemon: settings (listen, TLS, API key, allowed hosts) take effect when the daemon restarts; the API keeps its current ones")
                }
                return runtime
            }
        }

        static func runtime(context: CommandContext, options: RunOptions, json: Bool, textLogs: Bool,
                            control: ControlService? = nil) throws -> DaemonRuntime {
            guard !context.config.folders.isEmpty else {
                let source = context.config.sourceFile.map { "in \($0)" } ?? "(no config.yml found)"
                throw CommandFailure.usage("no folder is configured \(source); the daemon runs configured folders only")
            }
            let selection = FolderSelection(config: context.config, registry: context.registry,
                                            currentDirectory: context.currentDirectory, stateDirectory: context.stateDirectory)
            var pairs: [FolderPair] = []
            do {
                for folder in context.config.folders {
                    pairs += try selection.resolve(folder: folder.name, remote: nil, mode: folder.mode)
                }
            } catch {
                throw CommandFailure.usage(error.message)
            }
            return LongRunningCommand.runtime(context: context, pairs: pairs, options: options, command: "daemon",
                                              json: json, textLogs: textLogs, schedules: true, control: control)
        }
    }
}
