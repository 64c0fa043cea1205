import FerryConfig
import FerryCore
import FerryEngine
import FerryJournal
import FerryPluginAPI
import FerrySystem
import Foundation
import Logging
import ServiceLifecycle

/// Everything `ferry watch` and `ferry daemon` run in one process: a runner per folder
/// pair, a watcher per push folder, a poller per pull folder, the schedules, the bandwidth
/// timetables and the status file. `run()` returns when its task is cancelled, after the
/// graceful stop: no new runs, running transfers cancelled at their next chunk (their
/// journal rows stay at the resumable point), results committed, within `stop_timeout`.
public struct DaemonRuntime: Sendable {
    public let config: Config
    public let selection: FolderSelection
    public let pairs: [FolderPair]
    /// The state folder, handed to every part that reads or writes the journal or history.
    public let state: StateFolder
    public let options: RunOptions
    public let command: String
    public let makeSink: @Sendable (FolderPair) -> any RunEventSink
    public let logger: Logger
    /// The control API (the daemon's); nil for `ferry watch`.
    public let control: ControlService?
    /// The terminal's live table of runs, when there is a terminal to show it on.
    public let liveRuns: (any LiveRunObserver)?

    public init(config: Config, selection: FolderSelection, pairs: [FolderPair], state: StateFolder,
                options: RunOptions, command: String, logger: Logger, control: ControlService? = nil,
                liveRuns: (any LiveRunObserver)? = nil, makeSink: @escaping @Sendable (FolderPair) -> any RunEventSink) {
        self.control = control
        self.liveRuns = liveRuns
        self.config = config
        self.selection = selection
        self.pairs = pairs
        self.state = state
        self.options = options
        self.command = command
        self.logger = logger
        self.makeSink = makeSink
    }

    /// Runners by folder name and mode, made on first use (a schedule may pull a folder
    /// that is watched for push: one pair lock keeps the two apart).
    ///
    /// Each runner's `run()` is a child of `run()` here, a service of the runtime's group:
    /// stopping the runtime stops every runner's run under way.
    actor Runners: Service {
        private var runners: [String: PairRunner] = [:]
        private nonisolated let hosts = ChildTasks()
        private let make: @Sendable (FolderPair) -> PairRunner
        private let pauses: DaemonPauses?

        init(pauses: DaemonPauses? = nil, make: @escaping @Sendable (FolderPair) -> PairRunner) {
            self.pauses = pauses
            self.make = make
        }

        func runner(for pair: FolderPair) async -> PairRunner {
            let key = pair.mode.rawValue + " " + pair.name + " " + pair.localRoot
            if let existing = runners[key] { return existing }
            let runner = make(pair)
            runners[key] = runner
            if hosts.start({ await runner.run() }).isFinished {
                // The runtime is stopping: this runner will never run.
                await runner.markStopped()
            }
            // A folder paused through the API stays paused in runners made later.
            if pauses?.isPaused(pair.name) == true { await runner.pause() }
            return runner
        }

        func all() -> [PairRunner] {
            Array(runners.values)
        }

        /// Runs the runners until cancelled; returns once every run under way has ended.
        nonisolated func run() async {
            await hosts.run()
        }
    }

    public func run() async {
        // The one clock of the runtime: the runs', and every part's that waits or stamps.
        let clock = options.clock
        let items = PendingItemCount(state: state, grouping: config.items,
                                     clock: clock)
        let control = self.control
        let board = DaemonStatusBoard(stateFolder: state, command: command,
                                      itemsProvider: { await items.current() }, events: control?.events,
                                      liveRuns: liveRuns, clock: clock)
        let outages = OutageRecorder(state: state)
        // Outages a killed process left open end now: what happened after it is not known.
        try? await state.history().closeOpenOutages(at: clock.wallTime())
        let bandwidth = BandwidthSwitcher(settings: config.bandwidth, clock: clock)
        let config = self.config
        let state = self.state
        let options = self.options
        let logger = self.logger
        let makeSink = self.makeSink
        let runners = Runners(pauses: control?.pauses) { pair in
            board.register(pair)
            var sink: any RunEventSink = BoardEventSink(inner: makeSink(pair), board: board, outages: outages, clock: clock)
            if let events = control?.events { sink = EventLogSink(inner: sink, log: events, folder: pair.name) }
            return PairRunner(pair: pair, config: config, state: state, options: options,
                              sink: sink, board: board, bandwidth: bandwidth, logger: logger)
        }
        let selection = self.selection
        let schedule = ScheduleRunner(entries: config.schedules, stateDirectory: state.directory, board: board,
                                      logger: logger, clock: clock) { entry in
            let pairs: [FolderPair]
            do {
                pairs = try selection.resolve(folder: entry.folder, remote: nil, mode: entry.mode)
            } catch {
                logger.error("schedule cannot run", metadata: ["run": "\(entry.action)", "error": "\(error)"])
                return []
            }
            var found: [PairRunner] = []
            for pair in pairs { found.append(await runners.runner(for: pair)) }
            return found
        }

        let handle = control.map { control in
            DaemonControl(config: config, state: state, board: board, events: control.events,
                          runners: runners, selection: selection, pauses: control.pauses, clock: clock)
        }
        if let control, let handle, control.slot.install(handle) {
            // After the old runtime has stopped and this one serves: a client that had a
            // run under way asks again now, and is answered by this runtime.
            var event = JSONObject()
            event.add("event", "reload")
            event.add("folders", config.folders.map(\.name))
            event.add("schedules", config.schedules.count)
            control.events.publish(name: "reload", object: event)
        }
        var parts: [(name: String, service: any Service)] = [
            ("runners", runners), ("status board", board), ("outage recorder", outages),
            ("bandwidth switcher", bandwidth), ("schedule", schedule),
        ]
        for pair in pairs {
            let follower = PairFollower(pair: pair, runner: await runners.runner(for: pair), config: config,
                                        board: board, logger: logger)
            parts.append((follower.description, follower))
        }
        let group = Self.group(of: parts, logger: logger)
        await withTaskCancellationHandler {
            do {
                try await group.run()
            } catch {
                // Only a group run twice throws here (every part's end is ignored).
                logger.error("daemon parts did not run", metadata: ["error": "\(error)"])
            }
        } onCancel: {
            // Requests from now on wait for the next runtime (a reload) or get none (a stop).
            if let control, let handle { control.slot.remove(handle) }
            logger.info("stopping at a resumable point", metadata: ["within": "\(config.watch.stopTimeout)"])
        }
        // The bound on the stop (`stop_timeout`) is kept by whoever cancelled the runtime
        // (`LongRunningProcess`): a child task cannot be left behind, only waited for.
        _ = await Self.within(.seconds(2), clock: clock) {
            await outages.writeQueued()
            try? await state.history().closeOpenOutages(at: clock.wallTime())
        }
    }

    /// The runtime's parts as one service group. One part ending (a folder that cannot be
    /// watched) does not end the rest; the runtime's cancellation cancels them all, and the
    /// group returns once all have ended.
    private static func group(of parts: [(name: String, service: any Service)], logger: Logger) -> ServiceGroup {
        ServiceGroup(configuration: ServiceGroupConfiguration(services: parts.map {
            .init(service: $0.service, successTerminationBehavior: .ignore, failureTerminationBehavior: .ignore,
                  serviceName: $0.name)
        }, logger: logger))
    }

    /// Runs `body` in a fresh task (so the caller's cancellation does not reach it) and
    /// waits for it at most `limit`; tells whether it finished.
    package static func within(_ limit: Duration, clock: any FerryClock, _ body: @escaping @Sendable () async -> Void) async -> Bool {
        // An unstructured task: the caller is cancelled by now, and its cancellation must
        // not cut the wait short.
        await Task {
            let (finished, signal) = AsyncStream<Bool>.makeStream()
            let work = Task {
                await body()
                signal.yield(true)
            }
            let timer = Task {
                await clock.sleep(for: limit)
                signal.yield(false)
            }
            var result = false
            for await value in finished {
                result = value
                break
            }
            work.cancel()
            timer.cancel()
            return result
        }.value
    }
}
