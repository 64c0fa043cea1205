import FerryCore
import FerryEngine
import FerrySystem

extension FolderWatcher {
    /// What the watcher keeps while it runs, and what it does with each input: events turn
    /// into settling paths, ticks into run requests for what settled (and the periodic
    /// rescan), a run's end into another look at the files it held back.
    struct Loop {
        let watcher: FolderWatcher
        var tree: TreeWatch
        var tracker: SettleTracker
        let feed: AsyncStream<Input>.Continuation
        var nextRescan: Double
        var lastOverflowHint = -Double.infinity

        init(watcher: FolderWatcher, tree: TreeWatch, feed: AsyncStream<Input>.Continuation) {
            self.watcher = watcher
            self.tree = tree
            self.feed = feed
            tracker = SettleTracker(quietPeriod: watcher.settings.quietPeriod.inSeconds)
            nextRescan = watcher.runner.clock.now() + watcher.settings.rescanInterval.inSeconds
        }

        private var pair: FolderPair { watcher.runner.pair }
        private func now() -> Double { watcher.runner.clock.now() }

        func requestRun(_ reason: String, settled: Set<String> = [], folders: Set<String> = [],
                        removed: Set<String> = []) async {
            let feed = self.feed
            await watcher.runner.request(RunRequest(reason: reason, settledFiles: settled, settledFolders: folders,
                                                    removedFiles: removed)) { summary in
                feed.yield(.runEnded(summary))
            }
        }

        /// The pending paths, built once per change: a burst has thousands.
        private func publishUnsettled() async {
            let unsettled = tracker.unsettled
            await watcher.runner.setUnsettled(unsettled)
            watcher.board.setUnsettled(pair: pair.name, count: unsettled.count)
        }

        mutating func handle(_ events: [InotifyEvent]) async {
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
                        watcher.logger.warning("events were lost; rescanning the folder", metadata: [
                            "folder": "\(pair.name)", "reason": "\(reason.rawValue)",
                            "hint": "raise fs.inotify.max_queued_events (sysctl) if this happens often",
                        ])
                    }
                }
            }
            watcher.reportWatchLimit(tree, changes: changes)
            // A run another source asks for (a schedule) must leave these out too.
            await publishUnsettled()
        }

        mutating func tick() async {
            let at = now()
            if let deadline = tracker.nextDeadline, deadline <= at {
                let batch = tracker.takeSettled(at: at)
                await publishUnsettled()
                // Removals matter to a mirror (--delete); for a plain push the run finds
                // nothing to do, at the cost of one scan.
                if !batch.isEmpty {
                    watcher.logger.debug("settled", metadata: ["folder": "\(pair.name)", "files": "\(batch.files.count)",
                                                               "folders": "\(batch.folders.count)"])
                    await requestRun(batch.folders.isEmpty ? "watch" : "rescan", settled: batch.files, folders: batch.folders,
                                     removed: batch.removed)
                }
            }
            if at >= nextRescan {
                nextRescan = at + watcher.settings.rescanInterval.inSeconds
                await requestRun("periodic rescan")
            }
        }

        /// Files the run left out as too fresh, which no event announced (they changed while
        /// nothing watched): look again once they may have settled.
        mutating func runEnded(_ summary: RunSummary?) {
            let at = now()
            let known = tracker.unsettled
            for path in summary?.heldBack ?? [] where !known.contains(path) {
                tracker.changed(path, written: false, at: at)
            }
        }
    }
}
