import FerryCore
import FerryEngine
import FerryPluginAPI
import FerrySystem
import Synchronization

/// The daemon's events, numbered, for the control API's event stream: the run events of
/// every folder (the objects `--json` prints, with the folder) and the daemon's own
/// (`run_started`, `run_ended`, `paused`, `resumed`). The last `capacity` are kept so a
/// client that reconnects with `Last-Event-ID` gets what it missed; one that fell further
/// behind gets a `reset` event first and should read the status again.
public final class DaemonEventLog: Sendable {
    public struct Entry: Sendable, Equatable {
        public var id: Int
        /// The event's name (`transferred`, `run_started`, …).
        public var name: String
        /// One JSON object.
        public var json: String
    }

    private struct State {
        var nextId = 1
        var kept: [Entry] = []
        var subscribers: [Int: AsyncStream<Entry>.Continuation] = [:]
        var nextSubscriber = 0
        var closed = false
    }

    private let state = Mutex(State())
    public let capacity: Int

    private let clock: any FerryClock

    public init(capacity: Int = 2_000, clock: any FerryClock) {
        self.clock = clock
        self.capacity = capacity
    }

    public func publish(name: String, object: JSONObject) {
        let fallenBehind = state.withLock { state -> [AsyncStream<Entry>.Continuation] in
            guard !state.closed else { return [] }
            let entry = Entry(id: state.nextId, name: name, json: object.text)
            state.nextId += 1
            state.kept.append(entry)
            if state.kept.count > capacity { state.kept.removeFirst(state.kept.count - capacity) }
            var fallenBehind: [AsyncStream<Entry>.Continuation] = []
            for continuation in state.subscribers.values {
                if case .dropped = continuation.yield(entry) { fallenBehind.append(continuation) }
            }
            return fallenBehind
        }
        // A subscriber `capacity` events behind is ended rather than skipped silently: it
        // reconnects with its last id and is told (`reset`) what it can no longer replay.
        // Outside the lock: ending a stream runs its termination handler, which takes it.
        for continuation in fallenBehind { continuation.finish() }
    }

    /// A run's event, with its folder.
    public func publish(_ event: RunEvent, folder: String) {
        let object = event.jsonObject(folder: folder)
        publish(name: Self.name(of: event), object: object)
    }

    /// The events after `lastId` that are still kept, then every new one, until the log
    /// closes or the stream is dropped. `missed` is true when events after `lastId` were
    /// already let go.
    public func subscribe(after lastId: Int?) -> (missed: Bool, events: AsyncStream<Entry>) {
        let (stream, continuation) = AsyncStream<Entry>.makeStream(bufferingPolicy: .bufferingOldest(capacity))
        let (missed, key) = state.withLock { state -> (Bool, Int?) in
            var missed = false
            if let lastId {
                let oldestKept = state.kept.first?.id ?? state.nextId
                missed = lastId + 1 < oldestKept || lastId >= state.nextId
                for entry in state.kept where entry.id > lastId { continuation.yield(entry) }
            }
            guard !state.closed else {
                continuation.finish()
                return (missed, nil)
            }
            let key = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[key] = continuation
            return (missed, key)
        }
        if let key {
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.subscribers.removeValue(forKey: key) }
            }
        }
        return (missed, stream)
    }

    /// The kept events after `lastId`, waiting up to `wait` for the first to come: the
    /// long-poll form of the stream, for clients that read whole responses.
    public func entries(after lastId: Int, wait: Duration) async -> [Entry] {
        let deadline = clock.now() + wait.inSeconds
        while true {
            let found = state.withLock { state in state.kept.filter { $0.id > lastId } }
            if !found.isEmpty || clock.now() >= deadline || Task.isCancelled || isClosed { return found }
            await clock.sleep(until: min(deadline, clock.now() + 0.1))
        }
    }

    var isClosed: Bool { state.withLock { $0.closed } }

    /// The id the next event will get (what a client that starts now has seen up to, plus one).
    public var nextId: Int { state.withLock { $0.nextId } }

    /// Ends every stream (the daemon stops).
    public func close() {
        let subscribers = state.withLock { state in
            state.closed = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }

    static func name(of event: RunEvent) -> String {
        switch event {
        case .planned: "planned"
        case .transferred: "transferred"
        case .deleted: "deleted"
        case .moved: "moved"
        case let .failed(_, _, _, willRetry, _): willRetry ? "retrying" : "failed"
        case .conflict: "conflict"
        case .evicted: "evicted"
        case .skipped: "skipped"
        case .remoteOffline: "remote_offline"
        case .remoteOnline: "remote_online"
        case .waitingForWriteLease: "waiting_for_lease"
        case .summary: "summary"
        }
    }
}

/// Passes a folder's run events on and into the daemon's event log.
public struct EventLogSink: RunEventSink {
    public let inner: any RunEventSink
    public let log: DaemonEventLog
    public let folder: String

    public init(inner: any RunEventSink, log: DaemonEventLog, folder: String) {
        self.inner = inner
        self.log = log
        self.folder = folder
    }

    public func emit(_ event: RunEvent) {
        log.publish(event, folder: folder)
        inner.emit(event)
    }
}
