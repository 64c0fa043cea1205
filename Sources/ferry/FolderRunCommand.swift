import FerryCore
import FerryPluginAPI
import Foundation

/// What `push` and `pull` share: resolve the folders, run each, report, pick the exit code.
enum FolderRunCommand {
    static func run(mode: SyncMode, folder: String?, remote: String?, global: GlobalOptions, transfer: TransferOptions) async throws {
        let context = try CommandContext.load(global)
        let selection = FolderSelection(config: context.config, registry: context.registry,
                                        currentDirectory: context.currentDirectory)
        let pairs: [FolderPair]
        do {
            pairs = try selection.resolve(folder: folder, remote: remote, mode: mode)
        } catch {
            throw CommandFailure.usage(error.message)
        }
        let options = try transfer.runOptions()

        // Folders on different remotes run side by side, so one remote that is offline
        // (and waited for, up to retry.offline_wait) does not hold up the others; folders
        // on the same remote run one after another, in config order.
        var groups: [[FolderPair]] = []
        var groupOfRemote: [String: Int] = [:]
        for pair in pairs {
            if let index = groupOfRemote[pair.backend.displayName] {
                groups[index].append(pair)
            } else {
                groupOfRemote[pair.backend.displayName] = groups.count
                groups.append([pair])
            }
        }
        let concurrent = groups.count > 1
        let single = pairs.count == 1
        let config = context.config, stateDirectory = context.stateDirectory
        let json = global.json, verbose = global.verbose > 0, dryRun = transfer.dryRun
        let anyFailed = await withTaskGroup(of: Bool.self) { tasks in
            for group in groups {
                tasks.addTask {
                    var failed = false
                    for pair in group {
                        if await !runOne(pair, mode: mode, config: config, stateDirectory: stateDirectory,
                                         options: options, json: json, verbose: verbose, dryRun: dryRun,
                                         showsProgress: !concurrent, namesFolder: concurrent, throwsOnError: single) {
                            failed = true
                        }
                    }
                    return failed
                }
            }
            return await tasks.reduce(false) { $0 || $1 }
        }
        if anyFailed { throw ExitCodeFailure.someFilesFailed }
    }

    /// Runs one pair and reports it; false when some of its files failed or the run did.
    /// A single pair's run error is the command's error (`throwsOnError`); with several,
    /// it is reported and the others go on.
    private static func runOne(_ pair: FolderPair, mode: SyncMode, config: Config, stateDirectory: String,
                               options: RunOptions, json: Bool, verbose: Bool, dryRun: Bool, showsProgress: Bool,
                               namesFolder: Bool, throwsOnError: Bool) async -> Bool {
        let progress = RunProgress()
        let display = (showsProgress && !json && StandardStreams.outputIsTerminal && StandardStreams.errorIsTerminal && !dryRun)
            ? ProgressDisplay(progress: progress, title: "\(mode.rawValue) \(pair.name)") : nil
        let sink: any RunEventSink = json
            ? JSONEventPrinter(folder: pair.name)
            : TextEventPrinter(verbose: verbose, display: display, folder: namesFolder ? pair.name : nil)
        display?.start()
        let run = SyncRun(pair: pair, config: config, stateDirectory: stateDirectory,
                          options: options, sink: sink, progress: progress)
        do {
            let summary = try await run.run()
            display?.stop()
            return summary.succeeded
        } catch {
            display?.stop()
            StandardStreams.error(throwsOnError ? "ferry: \(error.message)" : "ferry: \(pair.name): \(error.message)")
            return false
        }
    }
}

/// Exit 1 without a further message: the failures were already listed.
enum ExitCodeFailure: Error {
    case someFilesFailed
}
