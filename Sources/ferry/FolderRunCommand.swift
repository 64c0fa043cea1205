import ArgumentParser
import FerryConfig
import FerryCore
import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import Foundation
import Synchronization
import UnixSignals

/// What `push` and `pull` share: resolve the folders, run each, report, pick the exit code.
enum FolderRunCommand {
    /// `loaded`: a context the caller already has (`resolve --now`; logging is set up once).
    static func run(mode: SyncMode, folder: String?, remote: String?, global: GlobalOptions, transfer: TransferOptions,
                    mirror: Bool, loaded: CommandContext? = nil, fetch: [String] = []) async throws {
        let context = try loaded ?? CommandContext.load(global)
        if let folder, !fetch.isEmpty {
            try await OnDemandFetch.request(folder: folder, paths: fetch, context: context, json: global.json,
                                            dryRun: transfer.dryRun)
        }
        // A named folder whose run conditions do not hold waits, even when the daemon owns it.
        if let folder, remote == nil, !transfer.now, let configured = context.config.folder(named: folder),
           let waiting = await RunConditionGate.waiting(configured.conditions) {
            let summary = RunConditionGate.waitingSummary(folder: folder, mode: mode, reason: waiting)
            (global.json ? JSONEventPrinter(folder: folder) as any RunEventSink
                         : TextEventPrinter(verbose: false, display: nil, folder: nil)).emit(.summary(summary))
            return
        }
        if let folder, remote == nil, loaded == nil,
           try await DaemonDelegation.runIfOwned(folder: folder, mode: mode, context: context, transfer: transfer, mirror: mirror,
                                                 json: global.json, verbose: global.verbose > 0) {
            return
        }
        let selection = FolderSelection(config: context.config, registry: context.registry,
                                        currentDirectory: context.currentDirectory)
        let pairs: [FolderPair]
        do {
            pairs = try selection.resolve(folder: folder, remote: remote, mode: mode)
        } catch {
            throw CommandFailure.usage(error.message)
        }
        let options = try transfer.runOptions(mirror: mirror)

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
        let config = context.config, state = context.state
        let json = global.json, verbose = global.verbose > 0, dryRun = transfer.dryRun
        let ignoresConditions = transfer.now
        let destinations = Dictionary(pairs.map { ($0.name, destination($0, typedFolder: folder, typedRemote: remote, config: config)) },
                                      uniquingKeysWith: { first, _ in first })
        let progresses = Dictionary(pairs.map { ($0.name, RunProgress()) }, uniquingKeysWith: { first, _ in first })
        let work = Task {
            await withTaskGroup(of: RunOutcome.self) { tasks in
                for group in groups {
                    tasks.addTask {
                        var worst = RunOutcome.succeeded
                        for pair in group where !Task.isCancelled {
                            worst = max(worst, await runOne(pair, mode: mode, config: config, state: state,
                                             ignoresConditions: ignoresConditions,
                                             options: options, progress: progresses[pair.name] ?? RunProgress(),
                                             destination: destinations[pair.name] ?? Destination(local: pair.name, remote: ""),
                                             json: json, verbose: verbose, dryRun: dryRun,
                                             showsProgress: !concurrent, namesFolder: concurrent, throwsOnError: single))
                        }
                        return worst
                    }
                }
                return await tasks.reduce(.succeeded) { max($0, $1) }
            }
        }
        // Ctrl-C stops the run at a resumable point (transfers under way keep what they
        // sent, the journal is committed); a second Ctrl-C exits at once.
        let interrupted = InterruptFlag()
        let signals = await UnixSignalsSequence(trapping: .sigint)
        let watcher = Task {
            for await _ in signals {
                if interrupted.set() { exit(130) }
                work.cancel()
            }
        }
        let outcome = await work.value
        watcher.cancel()
        if interrupted.isSet {
            let left = progresses.values.flatMap { $0.snapshot() }
                .reduce(0) { $0 + max(0, $1.filesTotal - $1.filesDone - $1.filesFailed) }
            throw CommandFailure(exitCode: 130, message: "stopped; \(Plural.count(left, "file")) left, run the same command to continue")
        }
        if outcome == .configuration { throw ExitCode(2) }
        if outcome == .failed { throw ExitCodeFailure.someFilesFailed }
    }

    /// Where a run's files go, as the person named the two ends: `photos → nas:photos`, or
    /// for an ad-hoc pair the path and remote as typed (`small → s3://ferry/x`, never
    /// "ad-hoc"), so a summary always says where the files went.
    struct Destination: Sendable {
        var local: String
        var remote: String
        var mode: SyncMode = .push
        /// How the journal and the engine's messages name the remote (`webdav:http://nas/dav/#phone`),
        /// and its backend as a whole (`webdav:http://nas/dav/`), which the person calls `remoteName` (`nas`).
        var location = ""
        var backend = ""
        var remoteName = ""
        var text: String { "\(local) \(PairLabel.arrow(mode)) \(remote)" }

        /// `message` with the remote as the person named it (`nas:phone`), not as the engine
        /// names it: "cannot list webdav:http://nas/dav/#phone: …" → "cannot list nas:phone: …".
        func naming(_ message: String) -> String {
            guard !location.isEmpty, !remote.isEmpty else { return message }
            let named = message.replacingOccurrences(of: location, with: remote)
            return backend.isEmpty || remoteName.isEmpty ? named : named.replacingOccurrences(of: backend, with: remoteName)
        }
    }

    static func destination(_ pair: FolderPair, typedFolder: String?, typedRemote: String?, config: Config) -> Destination {
        let adHoc = typedRemote != nil
        let local = adHoc ? (typedFolder ?? pair.localRoot) : pair.name
        let remote = typedRemote.map { SecretRedaction.redactingPassword($0) } ?? PairLabel.remote(pair, config: config)
        // The backend as a whole: the configured remote's name, or an ad-hoc remote as typed.
        let remoteName = adHoc ? remote : config.folder(named: pair.name)?.remote ?? ""
        return Destination(local: local, remote: remote, mode: pair.mode, location: pair.remoteLocation,
                           backend: pair.backend.displayName, remoteName: remoteName)
    }

    /// How a pair's run ended, worst last: the command exits with the worst of its pairs'.
    enum RunOutcome: Int, Comparable {
        case succeeded, failed, configuration

        static func < (lhs: RunOutcome, rhs: RunOutcome) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Runs one pair and reports it.
    /// A single pair's run error is the command's error (`throwsOnError`); with several,
    /// it is reported and the others go on.
    private static func runOne(_ pair: FolderPair, mode: SyncMode, config: Config, state: StateFolder, ignoresConditions: Bool,
                               options: RunOptions, progress: RunProgress, destination: Destination, json: Bool, verbose: Bool, dryRun: Bool,
                               showsProgress: Bool, namesFolder: Bool, throwsOnError: Bool) async -> RunOutcome {
        let display = (showsProgress && !json && StandardStreams.outputIsTerminal && StandardStreams.errorIsTerminal && !dryRun)
            ? ProgressDisplay(progress: progress, title: "\(mode.rawValue) \(destination.local)") : nil
        let sink: any RunEventSink = json
            ? JSONEventPrinter(folder: pair.name, destination: destination)
            : TextEventPrinter(verbose: verbose, display: display, folder: namesFolder ? pair.name : nil,
                               destination: destination.text, naming: destination.naming)
        if !ignoresConditions, let waiting = await RunConditionGate.waiting(pair.conditions) {
            sink.emit(.summary(RunConditionGate.waitingSummary(folder: pair.name, mode: mode, reason: waiting)))
            return .succeeded
        }
        display?.start()
        let recorder = RunRecorder(pair: pair, trigger: .manual, state: state, keep: config.history.keep,
                                   progress: progress, inner: sink, clock: options.clock)
        if !dryRun { recorder.startSampling() }
        let run = PairRun(pair: pair, config: config, state: state,
                          options: options, sink: recorder, progress: progress)
        do {
            let summary = try await run.run()
            display?.stop()
            if !dryRun {
                let cancelled = Task.isCancelled
                await Task { await recorder.finish(summary: summary, error: nil, stopped: cancelled) }.value
            }
            return summary.succeeded ? .succeeded : .failed
        } catch {
            display?.stop()
            if !dryRun {
                let cancelled = Task.isCancelled
                await Task { await recorder.finish(summary: nil, error: error.message, stopped: cancelled) }.value
            }
            // After Ctrl-C the command says "stopped; N files left" for every pair.
            if !(Task.isCancelled && error.isStop) {
                let message = destination.naming(error.message)
                StandardStreams.error(throwsOnError ? "ferry: \(message)" : "ferry: \(pair.name): \(message)")
            }
            return error.isConfiguration ? .configuration : .failed
        }
    }
}

/// Set by the first Ctrl-C; `set()` tells whether it already was (the second one).
final class InterruptFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    func set() -> Bool { flag.exchange(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }
}

/// Exit 1 without a further message: the failures were already listed.
enum ExitCodeFailure: Error {
    case someFilesFailed
}
