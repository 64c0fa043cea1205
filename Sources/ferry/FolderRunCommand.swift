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
        var options = RunOptions()
        options.dryRun = transfer.dryRun
        options.mirror = transfer.delete
        options.maxDeletes = transfer.maxDelete
        options.forceDeletes = transfer.forceDelete
        options.transfers = transfer.transfers
        if let text = transfer.bwlimit {
            guard let rate = Quantity.bytes(text) else {
                throw CommandFailure.usage("--bwlimit takes a rate such as 500k, 10M or 0, not '\(text)'")
            }
            options.bandwidthLimit = rate
        }

        var anyFailed = false
        for pair in pairs {
            let progress = RunProgress()
            let display = (!global.json && StandardStreams.outputIsTerminal && StandardStreams.errorIsTerminal && !transfer.dryRun)
                ? ProgressDisplay(progress: progress, title: "\(mode.rawValue) \(pair.name)") : nil
            let sink: any RunEventSink = global.json
                ? JSONEventPrinter() : TextEventPrinter(verbose: global.verbose > 0, display: display)
            display?.start()
            let run = SyncRun(pair: pair, config: context.config, stateDirectory: context.stateDirectory,
                              options: options, sink: sink, progress: progress)
            do {
                let summary = try await run.run()
                display?.stop()
                if !summary.succeeded { anyFailed = true }
            } catch {
                display?.stop()
                if pairs.count == 1 { throw CommandFailure.runtime(error.message) }
                StandardStreams.error("ferry: \(pair.name): \(error.message)")
                anyFailed = true
            }
        }
        if anyFailed { throw ExitCodeFailure.someFilesFailed }
    }
}

/// Exit 1 without a further message: the failures were already listed.
enum ExitCodeFailure: Error {
    case someFilesFailed
}
