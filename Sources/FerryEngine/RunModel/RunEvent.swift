import FerryPlanning

/// Something a run reports as it goes; the command line turns these into JSON lines or a
/// progress display.
public enum RunEvent: Sendable {
    /// A job the plan contains (emitted for `--dry-run`).
    case planned(path: String, queue: String, action: FileAction, bytes: Int64)
    /// A file reached the other side.
    case transferred(path: String, queue: String, direction: FileAction, bytes: Int64, resumedFrom: Int64)
    /// A file was removed from the target (mirror).
    case deleted(path: String, queue: String, side: FileAction)
    /// A file was renamed on one side (two-way sync): `action` says which and why (a
    /// detected rename, or a conflict's losing version kept under `target`).
    case moved(path: String, queue: String, action: FileAction, target: String)
    /// An attempt failed; `willRetry` tells whether the file is queued again.
    case failed(path: String, queue: String, message: String, willRetry: Bool, attempt: Int)
    /// Both sides changed; nothing was transferred.
    case conflict(path: String, queue: String, message: String)
    /// The cache budget removed an in-sync file locally (`local_limit:`); the remote keeps it.
    case evicted(path: String, queue: String, bytes: Int64)
    /// The scanner passed over something.
    case skipped(path: String, reason: String)
    /// The remote stopped answering; jobs wait and it is probed again in `nextProbeSeconds`.
    case remoteOffline(remote: String, message: String, nextProbeSeconds: Double)
    /// The remote answers again after being offline; waiting jobs start again.
    case remoteOnline(remote: String, offlineSeconds: Double)
    /// Another device holds the remote's write lease (`WriteLease`): the run waits for it,
    /// up to `maxWaitSeconds`, before it writes anything.
    case waitingForWriteLease(remote: String, holder: String?, maxWaitSeconds: Double)
    /// The run is over.
    case summary(RunSummary)
}

/// Receives a run's events. Called from many tasks at once.
public protocol RunEventSink: Sendable {
    func emit(_ event: RunEvent)
}

/// Drops every event.
public struct DiscardingEventSink: RunEventSink {
    public init() {}
    public func emit(_ event: RunEvent) {}
}
