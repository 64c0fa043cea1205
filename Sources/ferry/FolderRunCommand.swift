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
        if let folder, remote == nil {
            // A named folder whose run conditions do not hold waits, even when the daemon owns it.
            if !transfer.now, await reportWaiting(folder: folder, mode: mode, config: context.config, json: global.json) { return }
            if loaded == nil, try await DaemonDelegation.runIfOwned(folder: folder, mode: mode, context: context, transfer: transfer,
                                                                   mirror: mirror, json: global.json, verbose: global.verbose > 0) {
                return
            }
        }
        let selection = FolderSelection(config: context.config, registry: context.registry,
                                        currentDirectory: context.currentDirectory, stateDirectory: context.stateDirectory,
                                        asksServersAgain: transfer.full)
        let pairs: [FolderPair]
        do {
            pairs = try selection.resolve(folder: folder, remote: remote, mode: mode)
        } catch {
            throw CommandFailure.usage(error.message)
        }
        let groups = groupedByRemote(pairs)
        let shared = try SharedRun(mode: mode, pairs: pairs, typedFolder: folder, typedRemote: remote, context: context,
                                   global: global, transfer: transfer, mirror: mirror, concurrent: groups.count > 1)
        let (outcome, interrupted) = await runStoppingOnInterrupt(groups, shared: shared)
        if interrupted {
            let left = shared.progresses.values.flatMap { $0.snapshot() }
                .reduce(0) { $0 + max(0, $1.filesTotal - $1.filesDone - $1.filesFailed) }
            throw CommandFailure(exitCode: 130, message: "stopped; \(Plural.count(left, "file")) left, run the same command to continue")
        }
        if outcome == .configuration { throw ExitCode(2) }
        if outcome == .failed { throw ExitCodeFailure.someFilesFailed }
    }

    /// Reports a configured folder whose run conditions do not hold; true when it did.
    private static func reportWaiting(folder: String, mode: SyncMode, config: Config, json: Bool) async -> Bool {
        guard let configured = config.folder(named: folder),
              let waiting = await RunConditionGate.waiting(configured.conditions) else { return false }
        let summary = RunConditionGate.waitingSummary(folder: folder, mode: mode, reason: waiting)
        (json ? JSONEventPrinter(folder: folder) as any RunEventSink
              : TextEventPrinter(verbose: false, display: nil, folder: nil)).emit(.summary(summary))
        return true
    }

    /// Folders on different remotes run side by side, so one remote that is offline (and
    /// waited for, up to retry.offline_wait) does not hold up the others; folders on the
    /// same remote run one after another, in config order.
    static func groupedByRemote(_ pairs: [FolderPair]) -> [[FolderPair]] {
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
        return groups
    }

    /// What every pair's run of one command shares.
    struct SharedRun: Sendable {
        let mode: SyncMode
        let config: Config
        let state: StateFolder
        let options: RunOptions
        let ignoresConditions: Bool
        let json: Bool
        let verbose: Bool
        let dryRun: Bool
        /// Several groups run at once: no progress bar, and each line names its folder.
        let concurrent: Bool
        /// A single pair's run error is the command's error; with several, it is reported
        /// and the others go on.
        let single: Bool
        let destinations: [String: Destination]
        let progresses: [String: RunProgress]

        init(mode: SyncMode, pairs: [FolderPair], typedFolder: String?, typedRemote: String?, context: CommandContext,
             global: GlobalOptions, transfer: TransferOptions, mirror: Bool, concurrent: Bool) throws {
            self.mode = mode
            config = context.config
            state = context.state
            options = try transfer.runOptions(mirror: mirror)
            ignoresConditions = transfer.now
            json = global.json
            verbose = global.verbose > 0
            dryRun = transfer.dryRun
            self.concurrent = concurrent
            single = pairs.count == 1
            let config = context.config
            destinations = Dictionary(pairs.map { ($0.name, destination($0, typedFolder: typedFolder, typedRemote: typedRemote, config: config)) },
                                      uniquingKeysWith: { first, _ in first })
            progresses = Dictionary(pairs.map { ($0.name, RunProgress()) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// Runs the groups side by side. Ctrl-C stops them at a resumable point (transfers under
    /// way keep what they sent, the journal is committed); a second Ctrl-C exits at once.
    private static func runStoppingOnInterrupt(_ groups: [[FolderPair]], shared: SharedRun) async -> (RunOutcome, interrupted: Bool) {
        // Unstructured: the first Ctrl-C cancels the runs, and the signal watcher must go on
        // to hear a second one.
        let work = Task {
            await withTaskGroup(of: RunOutcome.self) { tasks in
                for group in groups {
                    tasks.addTask {
                        var worst = RunOutcome.succeeded
                        for pair in group where !Task.isCancelled {
                            worst = max(worst, await runOne(pair, shared: shared))
                        }
                        return worst
                    }
                }
                return await tasks.reduce(.succeeded) { max($0, $1) }
            }
        }
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
        return (outcome, interrupted.isSet)
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
    private static func runOne(_ pair: FolderPair, shared: SharedRun) async -> RunOutcome {
        let mode = shared.mode, config = shared.config, state = shared.state, options = shared.options
        let json = shared.json, dryRun = shared.dryRun, throwsOnError = shared.single
        let progress = shared.progresses[pair.name] ?? RunProgress()
        let destination = shared.destinations[pair.name] ?? Destination(local: pair.name, remote: "")
        let display = (!shared.concurrent && !json && StandardStreams.outputIsTerminal && StandardStreams.errorIsTerminal && !dryRun)
            ? ProgressDisplay(progress: progress, title: "\(mode.rawValue) \(destination.local)") : nil
        let sink: any RunEventSink = json
            ? JSONEventPrinter(folder: pair.name, destination: destination)
            : TextEventPrinter(verbose: shared.verbose, display: display, folder: shared.concurrent ? pair.name : nil,
                               destination: destination.text, naming: destination.naming)
        if !shared.ignoresConditions, let waiting = await RunConditionGate.waiting(pair.conditions) {
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
