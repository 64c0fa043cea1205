/// Decides when changed files have settled enough to be sent, and gathers them into
/// batches: pure logic over values, with time passed in as seconds, so tests drive minutes
/// of watching in microseconds.
///
/// A path is settled when nothing happened to it for `quietPeriod` seconds and, if it was
/// seen being written, the writer closed it (`IN_CLOSE_WRITE`). A writer that keeps a
/// file open without writing (a stalled copy, a log) is given `unclosedGrace` seconds of
/// silence before the file counts as settled anyway. Everything that settled by the time
/// the tracker is asked goes out as one batch, and a batch waits while other complete files
/// are still within their quiet period (at most `maxBatchDelay`): a burst of 10,000 new
/// files copied over a few seconds is one run, not one per file. A writer that is still
/// writing (an open file) does not hold the others back. A folder to rescan (a new subfolder, a kernel queue overflow) is settled the
/// same way, so a folder that is still filling up is scanned once it is quiet.
public struct SettleTracker: Sendable {
    /// What became ready at one tick.
    public struct Batch: Sendable, Equatable {
        /// Files (relative paths) that settled.
        public var files: Set<String>
        /// Folders (relative paths, "" for the root) whose whole content must be scanned.
        public var folders: Set<String>
        /// Files that disappeared (deleted or moved away).
        public var removed: Set<String>

        public var isEmpty: Bool { files.isEmpty && folders.isEmpty && removed.isEmpty }
    }

    private struct Pending: Sendable {
        var lastChange: Double
        /// A write was seen and no close after it.
        var open: Bool
    }

    public let quietPeriod: Double
    public let unclosedGrace: Double
    /// How long settled files may wait for the rest of their burst.
    public let maxBatchDelay: Double
    private var files: [String: Pending] = [:]
    private var folders: [String: Double] = [:]
    private var removed: Set<String> = []

    public init(quietPeriod: Double, unclosedGrace: Double? = nil) {
        self.quietPeriod = quietPeriod
        self.unclosedGrace = unclosedGrace ?? max(quietPeriod * 10, 60)
        maxBatchDelay = quietPeriod * 3
    }

    /// The file was created, written or moved in.
    public mutating func changed(_ path: String, written: Bool, at now: Double) {
        removed.remove(path)
        var entry = files[path] ?? Pending(lastChange: now, open: false)
        entry.lastChange = now
        if written { entry.open = true }
        files[path] = entry
    }

    /// The writer closed the file (`IN_CLOSE_WRITE`): it counts as a change too, since the
    /// close is the last thing that happened to it.
    public mutating func closed(_ path: String, at now: Double) {
        removed.remove(path)
        files[path] = Pending(lastChange: now, open: false)
    }

    /// The file is gone: it leaves the pending set, and the next batch reports it.
    public mutating func removed(_ path: String) {
        files[path] = nil
        removed.insert(path)
    }

    /// The folder's content must be scanned (new subfolder, overflow, watch limit).
    public mutating func rescan(folder: String, at now: Double) {
        folders[folder] = now
    }

    /// Paths seen changing that have not settled yet: a run must leave these out.
    public var unsettled: Set<String> { Set(files.keys) }

    public var isIdle: Bool { files.isEmpty && folders.isEmpty && removed.isEmpty }

    /// When to ask again: the earliest moment a pending path can settle.
    public var nextDeadline: Double? {
        var earliest: Double?
        for entry in files.values {
            let due = due(entry)
            earliest = min(earliest ?? due, due)
        }
        for changed in folders.values {
            let due = changed + quietPeriod
            earliest = min(earliest ?? due, due)
        }
        if !removed.isEmpty { earliest = min(earliest ?? 0, 0) }
        return earliest
    }

    private func due(_ entry: Pending) -> Double {
        entry.lastChange + (entry.open ? unclosedGrace : quietPeriod)
    }

    /// Takes everything that settled by `now` out of the tracker, unless the rest of a
    /// burst is about to settle too (then an empty batch, and the caller asks again).
    public mutating func takeSettled(at now: Double) -> Batch {
        var batch = Batch(files: [], folders: [], removed: removed)
        removed = []
        var oldestDue: Double?
        var burstPending = false
        for (path, entry) in files {
            let due = due(entry)
            if due <= now {
                batch.files.insert(path)
                oldestDue = min(oldestDue ?? due, due)
            } else if !entry.open {
                burstPending = true
            }
        }
        for changed in folders.values where changed + quietPeriod > now { burstPending = true }
        if burstPending, let oldestDue, now - oldestDue < maxBatchDelay {
            batch.files = []
            return batch
        }
        for path in batch.files { files[path] = nil }
        for (folder, changed) in folders where now - changed >= quietPeriod {
            batch.folders.insert(folder)
        }
        for folder in batch.folders { folders[folder] = nil }
        return batch
    }
}
