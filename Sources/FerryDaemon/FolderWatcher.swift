import FerryConfig
import FerryCore
import FerryEngine
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation
import Logging

/// Watches one push folder for as long as the process runs: keeps the tree watched
/// (`TreeWatch`), lets changed files settle (`SettleTracker`), and asks the pair's runner
/// for a run when something settled, when the kernel lost events, and on the periodic
/// rescan. The first run at start covers what changed while nothing watched (and files
/// that landed in a folder before its watch was added).
public struct FolderWatcher: Sendable {
    public let runner: PairRunner
    private let settings: WatchSettings
    private let ignore: GlobSet
    private let board: DaemonStatusBoard
    private let logger: Logger

    private enum Input: Sendable {
        case events([InotifyEvent])
        case tick
        case runEnded(RunSummary?)
    }

    public init(runner: PairRunner, config: Config, board: DaemonStatusBoard, logger: Logger) throws(RunError) {
        self.runner = runner
        settings = config.watch
        do {
            ignore = try PairIgnores.globSet(pair: runner.pair, config: config, stateDirectory: runner.stateDirectory)
        } catch {
            throw RunError(error.description)
        }
        self.board = board
        self.logger = logger
    }

    /// Runs until cancelled.
    public func run() async throws(RunError) {
        let pair = runner.pair
        // A missing folder is not created: it may be a card or a disk that is not mounted,
        // and an empty folder in its place would look like "nothing to send".
        guard (try? LocalFileSystem.metadataFollowingLinks(pair.localRoot))?.kind == .directory else {
            throw RunError("cannot watch \(pair.localRoot): no such folder; create it or correct the folder's path")
        }
        let inotify: InotifyInstance
        do {
            inotify = try InotifyInstance()
        } catch {
            throw RunError(error.description)
        }
        let (inputs, feed) = AsyncStream<Input>.makeStream()
        let clock = runner.clock
        func now() -> Double { clock.now() }

        var tree = TreeWatch(root: pair.localRoot, ignore: ignore, registrar: inotify)
        var tracker = SettleTracker(quietPeriod: settings.quietPeriod.inSeconds)
        // The pending paths, built once per change: a burst has thousands.
        func publishUnsettled() async {
            let unsettled = tracker.unsettled
            await runner.setUnsettled(unsettled)
            board.setUnsettled(pair: pair.name, count: unsettled.count)
        }
        let initial = tree.watchTree()
        reportWatchLimit(tree, changes: initial)
        logger.info("watching", metadata: ["folder": "\(pair.name)", "path": "\(pair.localRoot)", "watches": "\(tree.watchCount)"])

        let forwarder = Task {
            for await batch in inotify.events() { feed.yield(.events(batch)) }
        }
        // Ticks drive the settle deadlines; a quarter of the quiet period is precise enough
        // and costs nothing while idle.
        let tickInterval = min(0.5, max(0.02, settings.quietPeriod.inSeconds / 4))
        let ticker = Task {
            while !Task.isCancelled {
                await clock.sleep(for: tickInterval)
                feed.yield(.tick)
            }
        }
        defer {
            forwarder.cancel()
            ticker.cancel()
            inotify.stop()
            feed.finish()
        }

        func requestRun(_ reason: String, settled: Set<String> = [], folders: Set<String> = [],
                        removed: Set<String> = []) async {
            await runner.request(RunRequest(reason: reason, settledFiles: settled, settledFolders: folders,
                                            removedFiles: removed)) { summary in
                feed.yield(.runEnded(summary))
            }
        }

        await requestRun("start")
        var nextRescan = now() + settings.rescanInterval.inSeconds
        var lastOverflowHint = -Double.infinity
        for await input in inputs {
            if Task.isCancelled { break }
            switch input {
            case let .events(events):
                let at = now()
                let changes = tree.handle(events)
                for change in changes {
                    switch change {
                    case let .appeared(path): tracker.changed(path, written: false, at: at)
                    case let .written(path): tracker.changed(path, written: true, at: at)
                    case let .closed(path): tracker.closed(path, at: at)
                    case let .removed(path): tracker.removed(path)
                    case let .rescan(folder, reason):
                        tracker.rescan(folder: folder, at: at)
                        if reason == .queueOverflow, at - lastOverflowHint > 60 {
                            lastOverflowHint = at
                            logger.warning("events were lost; rescanning the folder", metadata: [
                                "folder": "\(pair.name)", "reason": "\(reason.rawValue)",
                                "hint": "raise fs.inotify.max_queued_events (sysctl) if this happens often",
                            ])
                        }
                    }
                }
                reportWatchLimit(tree, changes: changes)
                // A run another source asks for (a schedule) must leave these out too.
                await publishUnsettled()
            case .tick:
                let at = now()
                if let deadline = tracker.nextDeadline, deadline <= at {
                    let batch = tracker.takeSettled(at: at)
                    await publishUnsettled()
                    // Removals matter to a mirror (--delete); for a plain push the run finds
                    // nothing to do, at the cost of one scan.
                    if !batch.files.isEmpty || !batch.folders.isEmpty || !batch.removed.isEmpty {
                        logger.debug("settled", metadata: ["folder": "\(pair.name)", "files": "\(batch.files.count)",
                                                           "folders": "\(batch.folders.count)"])
                        await requestRun(batch.folders.isEmpty ? "watch" : "rescan", settled: batch.files, folders: batch.folders,
                                         removed: batch.removed)
                    }
                }
                if at >= nextRescan {
                    nextRescan = at + settings.rescanInterval.inSeconds
                    await requestRun("periodic rescan")
                }
            case let .runEnded(summary):
                // Files the run left out as too fresh, which no event announced (they
                // changed while nothing watched): look again once they may have settled.
                let at = now()
                let known = tracker.unsettled
                for path in summary?.heldBack ?? [] where !known.contains(path) {
                    tracker.changed(path, written: false, at: at)
                }
            }
        }
    }

    private func reportWatchLimit(_ tree: TreeWatch, changes: [FolderChange]) {
        let limited = changes.compactMap { change -> String? in
            if case let .rescan(folder, .watchLimit) = change { return folder }
            return nil
        }
        guard !limited.isEmpty else { return }
        logger.warning("cannot watch every folder: the inotify watch limit is reached", metadata: [
            "folder": "\(runner.pair.name)", "unwatched": "\(limited.prefix(3).joined(separator: ", "))",
            "hint": "raise fs.inotify.max_user_watches (sysctl fs.inotify.max_user_watches=524288); until then these folders are covered by rescans",
        ])
    }
}
