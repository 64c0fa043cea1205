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
    let settings: WatchSettings
    private let ignore: GlobSet
    let board: DaemonStatusBoard
    let logger: Logger

    enum Input: Sendable {
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
        var loop = Loop(watcher: self, tree: TreeWatch(root: pair.localRoot, ignore: ignore, registrar: inotify), feed: feed)
        let initial = loop.tree.watchTree()
        reportWatchLimit(loop.tree, changes: initial)
        logger.info("watching", metadata: ["folder": "\(pair.name)", "path": "\(pair.localRoot)", "watches": "\(loop.tree.watchCount)"])

        // Ticks drive the settle deadlines; a quarter of the quiet period is precise enough
        // and costs nothing while idle.
        let tickInterval = min(0.5, max(0.02, settings.quietPeriod.inSeconds / 4))
        let clock = runner.clock
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await batch in inotify.events() { feed.yield(.events(batch)) }
            }
            group.addTask {
                while !Task.isCancelled {
                    await clock.sleep(for: tickInterval)
                    feed.yield(.tick)
                }
            }
            await loop.requestRun("start")
            // Ends when this task is cancelled (the stream then returns nil).
            for await input in inputs {
                if Task.isCancelled { break }
                switch input {
                case let .events(events): await loop.handle(events)
                case .tick: await loop.tick()
                case let .runEnded(summary): loop.runEnded(summary)
                }
            }
            // The events' reader ends once inotify stops; the ticker once cancelled.
            inotify.stop()
            group.cancelAll()
        }
        feed.finish()
    }

    func reportWatchLimit(_ tree: TreeWatch, changes: [FolderChange]) {
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
