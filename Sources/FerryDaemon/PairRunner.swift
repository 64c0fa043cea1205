import FerryConfig
import FerryCore
import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation
import Logging

/// Runs one folder pair for the long-running process, one run at a time: the watcher, the
/// poller and the schedules all ask it, and what they ask while a run is under way is
/// merged into a single follow-up run. So a rescan never starts a second engine on a pair
/// whose transfers are running; the changes it found are planned as soon as the current
/// run ends. Between processes the pair's `RunLock` does the same: a run waits while a
/// `ferry push` of the same pair holds it.
///
/// Its runs, and the timers and feeds between them, are child tasks of `run()`, which the
/// runtime runs for as long as it runs: cancelling it stops the run under way at a
/// resumable point, and it returns once that run has ended.
public actor PairRunner {
    public nonisolated let pair: FolderPair
    private let config: Config
    nonisolated let state: StateFolder
    nonisolated var stateDirectory: String { state.directory }
    private let baseOptions: RunOptions
    private let sink: any RunEventSink
    private let board: DaemonStatusBoard
    private let bandwidth: BandwidthSwitcher
    private let logger: Logger
    private let quietPeriod: Double
    /// The runs' clock (`RunOptions.clock`): its wall time judges files' modification
    /// times, and the runner's own waits are on it, as are those of the watcher and the
    /// poller that serve it.
    nonisolated let clock: any FerryClock

    private var pending: RunRequest?
    private var completions: [@Sendable (RunSummary?) -> Void] = []
    /// What this runner starts: every task of its own is a child of `run()`.
    private let tasks = ChildTasks()
    private var worker: ChildTasks.Handle?
    private var stopping = false
    /// Files the watcher saw changing that have not settled: left out of every run.
    private var unsettled: Set<String> = []
    /// The running push's feed, while it takes new files.
    private var activeFeed: JobFeed?
    /// Files waiting to be offered to the running push once quiet; cancelled when it ends.
    private var offers: [ChildTasks.Handle] = []
    /// Runs that failed in a row, and since when the remote has not answered.
    private var failuresInRow = 0
    /// Since when (the clock's monotonic seconds) the remote has not answered.
    private var unreachableSince: Double?
    /// Paused through the control API: requests wait (merged) and nothing runs until resumed.
    public private(set) var paused = false
    /// The folder's run conditions (`when:`): while they do not hold, requests wait (merged)
    /// and are run by the recheck that finds them holding again.
    private var conditionWait: ConditionWait
    private let probe: SystemConditionProbe
    private var recheck: ChildTasks.Handle?

    public init(pair: FolderPair, config: Config, state: StateFolder, options: RunOptions,
                sink: any RunEventSink, board: DaemonStatusBoard, bandwidth: BandwidthSwitcher, logger: Logger) {
        self.pair = pair
        self.config = config
        self.state = state
        baseOptions = options
        self.sink = sink
        self.board = board
        self.bandwidth = bandwidth
        self.logger = logger
        quietPeriod = config.watch.quietPeriod.inSeconds
        clock = options.clock
        conditionWait = ConditionWait(interval: config.watch.conditionInterval.inSeconds)
        probe = SystemConditionProbe.standard()
    }

    public func setUnsettled(_ paths: Set<String>) {
        unsettled = paths
    }

    /// Asks for a run; `completion` gets its summary (nil when it could not run).
    public func request(_ request: RunRequest, completion: @escaping @Sendable (RunSummary?) -> Void = { _ in }) {
        guard !stopping else {
            completion(nil)
            return
        }
        pending = pending.map { $0.merged(with: request) } ?? request
        completions.append(completion)
        // The root is the whole folder: that is the follow-up run's job, not a feed's.
        let folders = request.settledFolders.subtracting([""])
        if let feed = activeFeed, !request.settledFiles.isEmpty || !folders.isEmpty {
            let files = request.settledFiles
            tasks.start { await self.feedNewFiles(files, folders: folders, into: feed) }
        }
        if worker == nil && !paused && conditionWait.probeDue(now: clock.wallTime()) {
            startWorker()
        }
    }

    /// Runs what is asked, and what is started meanwhile, until cancelled (the runtime
    /// stops); then stops the run under way at a resumable point and returns once it has
    /// ended. What is asked from then on is answered with nil. Called once.
    public func run() async {
        await tasks.run()
        markStopped()
    }

    /// Nothing will run any more (the runner ran and was stopped, or the runtime stopped
    /// before it could run): what waits, and what is asked from now on, is answered nil.
    func markStopped() {
        stopping = true
        worker = nil
        recheck = nil
        offers = []
        for completion in completions { completion(nil) }
        completions = []
        pending = nil
    }

    private func startWorker() {
        worker = tasks.start { await self.work() }
        if worker?.isFinished == true { markStopped() }
    }

    /// Reads the folder's run conditions and decides; false when it must wait (a recheck is
    /// then scheduled, and the board says why).
    private func conditionsHold() async -> Bool {
        guard !pair.conditions.isEmpty else { return true }
        let unmet = RunConditionCheck.unmet(pair.conditions, reading: await probe.read(for: pair.conditions))
        switch conditionWait.decide(unmet: unmet, now: clock.wallTime()) {
        case .run:
            board.setWaiting(pair: pair.name, reason: nil)
            return true
        case let .wait(reason, recheckAt):
            board.setWaiting(pair: pair.name, reason: reason)
            logger.info("waiting", metadata: ["folder": "\(pair.name)", "for": "\(reason)"])
            recheck?.cancel()
            let delay = max(0, recheckAt - clock.wallTime())
            let clock = self.clock
            recheck = tasks.start {
                await clock.sleep(for: delay)
                guard !Task.isCancelled else { return }
                await self.recheckConditions()
            }
            return false
        }
    }

    /// A recheck came due: what waits runs if the conditions hold; with nothing waiting the
    /// conditions are read anyway, so the status stops saying "waiting" once they hold.
    private func recheckConditions() async {
        recheck = nil
        guard !stopping, !paused, worker == nil else { return }
        if pending != nil {
            startWorker()
        } else {
            _ = await conditionsHold()
        }
    }

    /// Stops the run under way at a resumable point (its transfers keep their partial
    /// files) and runs nothing until `resume`; what is asked meanwhile waits.
    public func pause() async {
        guard !paused else { return }
        paused = true
        board.setPaused(pair: pair.name, paused: true)
        let running = worker
        running?.cancel()
        await running?.finished()
    }

    /// Runs again: what waited, or a run that catches up with what changed meanwhile.
    public func resume() {
        guard paused else { return }
        paused = false
        board.setPaused(pair: pair.name, paused: false)
        request(RunRequest(reason: "resume"))
    }

    private func work() async {
        while pending != nil, !stopping, !paused, !Task.isCancelled {
            // The request stays pending while the folder waits: nothing a watcher saw is lost.
            guard await conditionsHold(), let request = pending else { break }
            pending = nil
            let waiting = completions
            completions = []
            let summary = await execute(request)
            for completion in waiting { completion(summary) }
        }
        worker = nil
    }

    private func execute(_ request: RunRequest) async -> RunSummary? {
        var options = options(for: request)
        let feed = pair.mode == .push && request.queues == nil && !options.dryRun ? JobFeed() : nil
        options.jobFeed = feed
        activeFeed = feed
        // Files the scan found too fresh (they changed while nothing watched, or just before
        // the daemon started) join this push once they have settled, instead of waiting for
        // its end: on a first push of hours, that is hours.
        if let feed {
            options.onFreshHeldBack = { fresh in self.tasks.start { await self.offerAgainWhenQuiet(fresh, feed: feed) } }
        }
        defer {
            activeFeed = nil
            offers.forEach { $0.cancel() }
            offers = []
        }
        let progress = RunProgress()
        board.runStarted(pair: pair.name, reason: request.reason, progress: progress)
        logger.info("run started", metadata: ["folder": "\(pair.name)", "mode": "\(pair.mode.rawValue)", "reason": "\(request.reason)"])
        let recorder = RunRecorder(pair: pair, trigger: RunTrigger.of(reason: request.reason), state: state,
                                   keep: config.history.keep, progress: progress, inner: sink, logger: logger,
                                   clock: clock)
        recorder.startSampling()
        let run = PairRun(pair: pair, config: config, state: state, options: options,
                          sink: recorder, progress: progress)
        do {
            let summary = try await run.run()
            // In a task of its own: a run stopped by a pause is cancelled, and the history
            // must still hear of it.
            let cancelled = Task.isCancelled
            await Task { await recorder.finish(summary: summary, error: nil, stopped: cancelled) }.value
            board.runEnded(pair: pair.name, summary: summary, error: nil, stopped: cancelled)
            ended(summary)
            return summary
        } catch {
            let stopped = Task.isCancelled || stopping
            await Task { await recorder.finish(summary: nil, error: error.message, stopped: stopped) }.value
            board.runEnded(pair: pair.name, summary: nil, error: stopped ? nil : error.message, stopped: stopped,
                           hold: error.hold)
            if !stopped { failed(error) }
            return nil
        }
    }

    /// The run's options for what was asked: what it leaves out, what it plans alone, the
    /// bandwidth of the hour.
    private func options(for request: RunRequest) -> RunOptions {
        var options = baseOptions
        options.waitForLock = true
        // A person who asked (through the control API) wants what is there now; a file
        // still being written is caught by the change check around its upload.
        let asked = RunTrigger.of(reason: request.reason) == .manual
        options.holdBack = asked ? [] : unsettled
        if pair.mode == .push && !asked {
            options.settleCutoff = SettleCutoff(now: clock.wallTime(), quietPeriod: quietPeriod)
        }
        if let queues = request.queues { options.queues = queues }
        options.acceptChanges = options.acceptChanges || request.acceptsChanges
        // Only files the watcher saw settle or go, and nothing else asked for: new ones,
        // and ones that went without ever being synced, need no walk of the tree
        // (`PairRun.planWatchedChanges` decides).
        if request.reason == "watch", request.settledFolders.isEmpty, request.queues == nil, !request.acceptsChanges {
            options.watchedChanges = WatchedChanges(settled: request.settledFiles, removed: request.removedFiles)
        }
        options.sharedThrottles += bandwidth.shared(remote: remoteName)
        options.queueThrottles = bandwidth.queues
        return options
    }

    /// A run that ended: logged, and a remote that was away is said to be back.
    private func ended(_ summary: RunSummary) {
        logger.info("run ended", metadata: [
            "folder": "\(pair.name)", "uploaded": "\(summary.uploadedFiles)", "downloaded": "\(summary.downloadedFiles)",
            "failed": "\(summary.failedFiles)", "held_back": "\(summary.heldBack.count)",
        ])
        if let since = unreachableSince {
            sink.emit(.remoteOnline(remote: pair.remoteLocation, offlineSeconds: clock.now() - since))
        }
        unreachableSince = nil
        failuresInRow = 0
    }

    /// A run that could not happen (not stopped): a held one waits for a person; any other
    /// is tried again with the retry backoff, so the daemon catches up by itself when a
    /// server comes back or a disk is mounted.
    private func failed(_ error: RunError) {
        if error.hold != nil {
            // Running again would hold again: the folder waits for a person (or for a
            // change the watcher sees, which asks for a run of its own).
            logger.warning("run held", metadata: ["folder": "\(pair.name)", "hold": "\(error.message)"])
            failuresInRow = 0
            return
        }
        failuresInRow += 1
        let delay = config.retry.delay(afterFailures: failuresInRow)
        if error.remoteUnreachable {
            if unreachableSince == nil {
                unreachableSince = clock.now()
                sink.emit(.remoteOffline(remote: pair.remoteLocation, message: error.message,
                                         nextProbeSeconds: delay.inSeconds))
            }
        } else if failuresInRow == 1 {
            logger.error("run failed", metadata: ["folder": "\(pair.name)", "error": "\(error.message)",
                                                  "retry_in": "\(delay)"])
        }
        let clock = self.clock
        tasks.start {
            await clock.sleep(for: delay)
            guard !Task.isCancelled else { return }
            await self.request(RunRequest(reason: "retry"))
        }
    }

    /// New files that settled while a push runs join it: planned on their own (they are
    /// new, so no listing can change the answer) and handed to the running engine. The
    /// request stays pending too, so the follow-up run covers whatever the engine no longer
    /// took and every changed file.
    private func feedNewFiles(_ files: Set<String>, folders: Set<String>, into feed: JobFeed) async {
        do {
            let classifier = try QueueClassifier(rules: config.queues, defaultQueue: config.defaultQueue)
            let ignore = try PairIgnores.globSet(pair: pair, config: config, stateDirectory: stateDirectory)
            var files = files
            // A new subfolder's files (they landed before its watch): its own small scan.
            for folder in folders.sorted() {
                let scan = try await LocalScanner(root: LocalFileSystem.join(pair.localRoot, folder),
                                                  ignore: try GlobSet(ScanSettings.builtInIgnores),
                                                  followSymlinks: false).scan()
                for entry in scan.entries { files.insert(folder + "/" + entry.path.string) }
            }
            let journal = try await state.journal()
            guard let pairId = try await journal.findFolderPair(localRoot: pair.localRoot,
                                                               remoteLocation: pair.remoteLocation)?.id else { return }
            let made = try await NewFileJobs.make(paths: files.subtracting(unsettled), pair: pair, pairId: pairId,
                                                  journal: journal, classifier: classifier, ignore: ignore,
                                                  cutoff: SettleCutoff(now: clock.wallTime(), quietPeriod: quietPeriod),
                                                  at: clock.wallTime())
            if feed.push(made.jobs), !made.jobs.isEmpty {
                logger.debug("joined the running push", metadata: ["folder": "\(pair.name)", "files": "\(made.jobs.count)"])
            }
            offerAgainWhenQuiet(made.fresh, feed: feed)
        } catch {
            logger.debug("new files wait for the next run", metadata: ["folder": "\(pair.name)", "error": "\(error)"])
        }
    }

    /// Files that were still fresh when found (by the run's scan, or by scanning a new
    /// subfolder: neither announced an event of its own) are offered to the running push
    /// once the last of them has been quiet for the quiet period, while that push still
    /// runs. If it has ended by then, they are planned by the next run: a pending request's
    /// (a subfolder's), or the one the watcher asks for when it reads the run's held-back
    /// files, which holds back whatever is still fresh for it to look at again.
    private func offerAgainWhenQuiet(_ fresh: [String: Double], feed: JobFeed) {
        guard activeFeed === feed, let newest = fresh.values.max() else { return }
        let clock = self.clock
        let wait = max(0, newest + quietPeriod - clock.wallTime()) + 0.01
        let paths = Set(fresh.keys)
        offers.append(tasks.start {
            await clock.sleep(until: clock.now() + wait)
            guard !Task.isCancelled else { return }
            await self.feedAgain(paths, into: feed)
        })
    }

    private func feedAgain(_ paths: Set<String>, into feed: JobFeed) async {
        guard activeFeed === feed, !stopping else { return }
        await feedNewFiles(paths, folders: [], into: feed)
    }

    /// The remote's name in config.yml, when the pair comes from there.
    private var remoteName: String? {
        config.folder(named: pair.name)?.remote
    }
}
