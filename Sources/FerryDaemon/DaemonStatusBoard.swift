import FerryCore
import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The running process's live state, kept by the runners and the schedule, and written to
/// `daemon-status.json` for `ferry status` (outages go to the history through
/// `OutageRecorder`). A lock, not an actor: event sinks report to it
/// synchronously, in order.
public final class DaemonStatusBoard: Service {
    private struct Folder {
        var name: String
        var mode: String
        var local: String
        var remote: String
        var running: RunProgress?
        var reason: String?
        var runStartedAt: Date?
        var lastRunEndedAt: Date?
        var lastError: String?
        var unsettled = 0
        var lastSummary: RunSummary?
        var paused = false
        var waitingFor: String?
        var hold: DaemonSnapshot.HoldState?
    }

    private struct State {
        var folders: [String: Folder] = [:]
        var order: [String] = []
        var schedules: [DaemonSnapshot.ScheduleState] = []
        var offline: [String: DaemonSnapshot.OfflineRemote] = [:]
    }

    private let state = Mutex(State())
    private let path: String
    private let command: String
    /// When the process's first board was made: a reload (SIGHUP) makes a new board, and
    /// "since" must still say when the daemon started, not when its config was last read.
    private static let processStartedAt = Mutex<Date?>(nil)
    private let startedAt: Date
    private let clock: any FerryClock
    /// Hook for media items: returns how many items are `filesPending` (derived from the
    /// journal by the items work). Nil leaves the field out.
    public let itemsProvider: (@Sendable () async -> Int?)?
    /// The control API's event stream, told of runs starting and ending and of pauses.
    public let events: DaemonEventLog?
    /// The terminal's live table, when the process has one.
    private let liveRuns: (any LiveRunObserver)?

    public init(stateFolder: StateFolder, command: String, itemsProvider: (@Sendable () async -> Int?)? = nil,
                events: DaemonEventLog? = nil, liveRuns: (any LiveRunObserver)? = nil,
                clock: any FerryClock) {
        path = DaemonSnapshot.path(in: stateFolder.directory)
        self.clock = clock
        startedAt = Self.processStartedAt.withLock { first in
            if first == nil { first = clock.wallDate() }
            return first ?? clock.wallDate()
        }
        self.command = command
        self.itemsProvider = itemsProvider
        self.events = events
        self.liveRuns = liveRuns
    }

    public func setPaused(pair: String, paused: Bool) {
        state.withLock { $0.folders[pair]?.paused = paused }
        var object = JSONObject()
        object.add("event", paused ? "paused" : "resumed")
        object.add("folder", pair)
        events?.publish(name: paused ? "paused" : "resumed", object: object)
    }

    /// What the folder's runs wait for (its run conditions), nil when they may run.
    func setWaiting(pair: String, reason: String?) {
        let changed = state.withLock { state -> Bool in
            guard state.folders[pair]?.waitingFor != reason else { return false }
            state.folders[pair]?.waitingFor = reason
            return true
        }
        guard changed else { return }
        var object = JSONObject()
        object.add("event", reason == nil ? "conditions_hold" : "waiting")
        object.add("folder", pair)
        object.add("waiting_for", reason)
        events?.publish(name: reason == nil ? "conditions_hold" : "waiting", object: object)
    }

    public func register(_ pair: FolderPair) {
        state.withLock { state in
            if state.folders[pair.name] == nil { state.order.append(pair.name) }
            state.folders[pair.name] = Folder(name: pair.name, mode: pair.mode.rawValue, local: pair.localRoot,
                                              remote: pair.remoteLocation)
        }
    }

    func runStarted(pair: String, reason: String, progress: RunProgress) {
        let mode = state.withLock { state in
            state.folders[pair]?.running = progress
            state.folders[pair]?.reason = reason
            state.folders[pair]?.runStartedAt = clock.wallDate()
            return state.folders[pair]?.mode
        }
        liveRuns?.runStarted(folder: pair, mode: mode ?? "run", progress: progress)
        var object = JSONObject()
        object.add("event", "run_started")
        object.add("folder", pair)
        object.add("reason", reason)
        events?.publish(name: "run_started", object: object)
    }

    /// `stopped`: the run was cut short at a resumable point (the daemon stops or reloads);
    /// what it left is done by the next run.
    /// `hold`: the run was held before its first write; the folder stays held (on the page,
    /// in the status and the metrics) until a run goes through. A run that failed otherwise
    /// leaves an earlier hold as it was.
    func runEnded(pair: String, summary: RunSummary?, error: String?, stopped: Bool = false, hold: ChangeHold? = nil) {
        liveRuns?.runEnded(folder: pair)
        let now = clock.wallDate()
        let newHold = state.withLock { state -> DaemonSnapshot.HoldState? in
            state.folders[pair]?.running = nil
            state.folders[pair]?.lastRunEndedAt = now
            state.folders[pair]?.lastError = error
            if let summary {
                state.folders[pair]?.lastSummary = summary
                state.folders[pair]?.hold = nil
            }
            guard let hold else { return nil }
            let held = DaemonSnapshot.HoldState(reason: hold.reason.rawValue, message: hold.message,
                                                since: state.folders[pair]?.hold?.since ?? now)
            state.folders[pair]?.hold = held
            return held
        }
        var object = JSONObject()
        object.add("event", "run_ended")
        object.add("folder", pair)
        object.add("error", error)
        object.add("stopped", stopped)
        object.add("held", newHold?.reason)
        events?.publish(name: "run_ended", object: object)
    }

    /// Whether the folder's last run was held and none has gone through since.
    public func isHeld(pair: String) -> Bool {
        state.withLock { $0.folders[pair]?.hold != nil }
    }

    public func setUnsettled(pair: String, count: Int) {
        state.withLock { $0.folders[pair]?.unsettled = count }
    }

    public func setSchedules(_ schedules: [DaemonSnapshot.ScheduleState]) {
        state.withLock { $0.schedules = schedules }
    }

    /// Marks a remote offline; true when it was not already (an outage begins).
    @discardableResult
    public func remoteOffline(_ remote: String, message: String) -> Bool {
        state.withLock { state in
            guard state.offline[remote] == nil else { return false }
            state.offline[remote] = DaemonSnapshot.OfflineRemote(remote: remote, since: clock.wallDate(), message: message)
            return true
        }
    }

    /// Marks a remote back; true when it was offline (an outage ends).
    @discardableResult
    public func remoteOnline(_ remote: String) -> Bool {
        state.withLock { $0.offline.removeValue(forKey: remote) } != nil
    }

    public func snapshot() async -> DaemonSnapshot {
        let items = await itemsProvider?()
        return state.withLock { state in
            let folders = state.order.compactMap { state.folders[$0] }.map { folder in
                DaemonSnapshot.FolderState(
                    name: folder.name, mode: folder.mode, local: folder.local,
                    state: folder.running == nil ? "idle" : "running", reason: folder.reason,
                    runStartedAt: folder.runStartedAt, lastRunEndedAt: folder.lastRunEndedAt, lastError: folder.lastError,
                    unsettledFiles: folder.unsettled,
                    queues: (folder.running?.snapshot() ?? []).map {
                        DaemonSnapshot.QueueState(queue: $0.queue, filesTotal: $0.filesTotal, filesDone: $0.filesDone,
                                                  filesFailed: $0.filesFailed, active: $0.active,
                                                  bytesTotal: $0.bytesTotal, bytesDone: $0.bytesDone, current: $0.current)
                    },
                    lastUploaded: folder.lastSummary?.uploadedFiles, lastDownloaded: folder.lastSummary?.downloadedFiles,
                    lastFailed: folder.lastSummary?.failedFiles, paused: folder.paused, remote: folder.remote,
                    waitingFor: folder.waitingFor, hold: folder.hold)
            }
            return DaemonSnapshot(pid: CurrentProcess.id, command: command, startedAt: startedAt, updatedAt: clock.wallDate(), folders: folders,
                                  schedules: state.schedules, offlineRemotes: state.offline.values.sorted { $0.remote < $1.remote },
                                  filesPendingItems: items)
        }
    }

    /// Writes the snapshot (to a temporary name, then renamed: a reader never sees half).
    public func write() async {
        guard let data = try? await snapshot().encoded() else { return }
        try? data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Rewrites the file every second until cancelled, then removes it.
    public func run() async {
        while !Task.isCancelled {
            await write()
            await clock.sleep(for: 1.0)
        }
        try? LocalFileSystem.removeFile(path)
    }
}

/// Passes a run's events on, and tells the board about remotes going offline and back,
/// and the outage recorder when an outage begins or ends.
public struct BoardEventSink: RunEventSink {
    public let inner: any RunEventSink
    public let board: DaemonStatusBoard
    public let outages: OutageRecorder?
    private let clock: any FerryClock

    public init(inner: any RunEventSink, board: DaemonStatusBoard, outages: OutageRecorder?, clock: any FerryClock) {
        self.inner = inner
        self.board = board
        self.outages = outages
        self.clock = clock
    }

    public func emit(_ event: RunEvent) {
        switch event {
        case let .remoteOffline(remote, message, _):
            if board.remoteOffline(remote, message: message) { outages?.began(remote: remote, at: clock.wallTime()) }
        case let .remoteOnline(remote, _):
            if board.remoteOnline(remote) { outages?.ended(remote: remote, at: clock.wallTime()) }
        default: break
        }
        inner.emit(event)
    }
}
