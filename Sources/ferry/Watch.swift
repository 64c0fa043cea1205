import ArgumentParser
import FerryCore
import FerryEngine
import FerryPluginAPI
import FerrySystem

extension Ferry {
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "watch",
            abstract: "Watch folders and send files as they settle, until stopped.",
            discussion: """
                FOLDER is a folder's name in config.yml, or a local path with --to REMOTE (as for push). \
                With no FOLDER, every configured folder: push folders are watched, pull folders polled.

                A file is sent once it has not changed for watch.quiet_period and its writer closed it.

                Runs in the foreground until Ctrl-C or SIGTERM, which stop at a resumable point and exit 0. \
                See docs/daemon.md.
                """)

        @Argument(help: "Configured folder names, or one local path (with --to).")
        var folders: [String] = []

        @Option(name: .long, help: ArgumentHelp("Where to push an ad-hoc folder.", valueName: "remote"))
        var to: String?

        @OptionGroup var global: GlobalOptions
        @OptionGroup var transfer: TransferOptions
        @OptionGroup var mirror: MirrorOption
        @OptionGroup var process: LongRunningOptions

        func run() async throws {
            let context = try CommandContext.load(global, logFormat: process.logFormat, quietLevel: process.logLevel.level)
            let options = try LongRunningCommand.options(transfer, mirror: mirror.delete, command: "watch")
            let pairs: [FolderPair]
            do {
                pairs = try watchedPairs(context: context)
            } catch let error as SelectionError {
                throw CommandFailure.usage(error.message)
            }
            for pair in pairs where pair.mode == .push
                && (try? LocalFileSystem.metadataFollowingLinks(pair.localRoot))?.kind != .directory {
                throw CommandFailure.usage("cannot watch \(pair.localRoot): no such folder; create it or check the path")
            }
            let runtime = LongRunningCommand.runtime(context: context, pairs: pairs, options: options, command: "watch",
                                                     json: global.json, textLogs: process.logFormat == .text, schedules: false)
            let announces = !global.json && process.logFormat == .text
            if announces { LongRunningCommand.announce(pairs, context: context, typedRemote: to) }
            try await LongRunningProcess.run(runtime, logger: context.logger)
            if announces { StandardStreams.errorAfterInterrupt("stopped watching; files not sent yet go with the next run") }
        }

        /// The folders named (each in its configured mode; push when not configured), the
        /// ad-hoc pair of `PATH --to REMOTE`, or every configured folder.
        private func watchedPairs(context: CommandContext) throws -> [FolderPair] {
            let selection = FolderSelection(config: context.config, registry: context.registry,
                                            currentDirectory: context.currentDirectory, stateDirectory: context.stateDirectory)
            if to != nil {
                guard folders.count == 1 else {
                    throw CommandFailure.usage("--to goes with exactly one local folder: ferry watch PATH --to REMOTE")
                }
                return try selection.resolve(folder: folders[0], remote: to, mode: .push)
            }
            if folders.isEmpty {
                guard !context.config.folders.isEmpty else {
                    throw CommandFailure.usage("no folder is configured; name one, or give a pair: ferry watch PATH --to REMOTE")
                }
                return try context.config.folders.flatMap { try selection.resolve(folder: $0.name, remote: nil, mode: $0.mode) }
            }
            return try folders.flatMap { name in
                try selection.resolve(folder: name, remote: nil, mode: context.config.folder(named: name)?.mode ?? .push)
            }
        }
    }
}
