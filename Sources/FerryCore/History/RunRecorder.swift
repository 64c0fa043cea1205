import CoreMetrics
import FerryEngine
import FerryJournal
import FerryPluginAPI
import FerrySystem
import Foundation
import Logging
import Synchronization

/// Records one run: passes its events on to `inner`, tallies them (and samples its
/// progress for the peak rate), and when the run is over writes its row into the run
/// history and adds its figures to the process's metrics. Nothing here can fail the run:
/// a history that cannot be written is logged and skipped.
public final class RunRecorder: RunEventSink {
    private let tally: Mutex<RunTally>
    private let inner: any RunEventSink
    private let pair: FolderPair
    private let trigger: RunTrigger
    private let state: StateFolder
    private let keep: Duration
    private let progress: RunProgress
    private let logger: Logger?
    private let clock: any FerryClock
    private let sampler: Mutex<Task<Void, Never>?> = Mutex(nil)
    /// The run history, opened while the run goes on (`startSampling`): a new history's
    /// schema costs several flushes, which then end no run.
    private let openingHistory: Mutex<Task<Result<RunHistory, HistoryError>, Never>?> = Mutex(nil)

    public init(pair: FolderPair, trigger: RunTrigger, state: StateFolder, keep: Duration, progress: RunProgress,
                inner: any RunEventSink, logger: Logger? = nil, clock: any FerryClock) {
        self.clock = clock
        self.pair = pair
        self.trigger = trigger
        self.state = state
        self.keep = keep
        self.progress = progress
        self.inner = inner
        self.logger = logger
        tally = Mutex(RunTally(startedAt: clock.wallTime()))
    }

    public func emit(_ event: RunEvent) {
        let now = clock.wallTime()
        tally.withLock { $0.add(event, at: now) }
        inner.emit(event)
    }

    /// Samples the run's progress about once a second, for the peak rate, until `finish`;
    /// and opens the run history meanwhile.
    public func startSampling() {
        let state = self.state
        openingHistory.withLock { opening in
            opening = Task { () async -> Result<RunHistory, HistoryError> in
                do throws(HistoryError) {
                    return .success(try await state.history())
                } catch {
                    return .failure(error)
                }
            }
        }
        let progress = self.progress
        let clock = self.clock
        let task = Task { [weak self] in
            while !Task.isCancelled {
                let bytes = progress.snapshot().reduce(Int64(0)) { $0 + $1.bytesDone }
                let now = clock.wallTime()
                guard let self else { return }
                self.tally.withLock { $0.sample(bytesDone: bytes, at: now) }
                await clock.sleep(for: 1.0)
            }
        }
        sampler.withLock { $0 = task }
    }

    /// The run ended with `summary`, or could not happen (`error`); `stopped` when it was
    /// cancelled at a resumable point.
    public func finish(summary: RunSummary?, error: String?, stopped: Bool = false) async {
        sampler.withLock { $0?.cancel() }
        let now = clock.wallTime()
        let figures = tally.withLock { tally in
            tally.finish(at: now)
            return tally
        }
        let outcome = stopped ? "stopped" : summary.map { $0.succeeded ? "ok" : "failed" } ?? "error"
        var record = RunRecord(folder: pair.name, mode: pair.mode.rawValue, localRoot: pair.localRoot,
                               remote: pair.remoteLocation, trigger: trigger, startedAt: figures.startedAt, endedAt: now,
                               outcome: outcome, error: error, tally: figures)
        record.journalBytes = Self.journalBytes(at: state.journalPath)
        if let counted = summary?.trackedFiles {
            record.trackedFiles = counted
        } else {
            record.trackedFiles = await trackedFiles()
        }
        RunMetrics.add(record)
        do {
            let history: RunHistory
            if let opening = openingHistory.withLock({ $0.take() }), case let .success(opened) = await opening.value {
                history = opened
            } else {
                history = try await state.history()
            }
            try await history.append(record)
            // Pruning is a cheap indexed delete; once per run keeps the table to `keep`.
            try await history.prune(before: now - keep.inSeconds)
        } catch {
            logger?.warning("run not recorded in the history", metadata: ["error": "\(error)"])
        }
    }

    /// Every file the journal tracks (all pairs: the journal is one file for all of them).
    private func trackedFiles() async -> Int {
        guard let journal = try? await state.existingJournal(),
              let count = try? await journal.fileCount() else { return 0 }
        return count
    }

    /// The journal's bytes on disk, its WAL included.
    static func journalBytes(at path: String) -> Int64 {
        return [path, path + "-wal"].reduce(Int64(0)) { total, file in
            total + ((try? LocalFileSystem.metadata(file))?.size ?? 0)
        }
    }
}

/// The run history's figures as swift-metrics counters, which the daemon's Prometheus
/// registry exports at `/metrics` (a process that bootstrapped no metrics backend, such
/// as `ferry push`, drops them).
public enum RunMetrics {
    public static func add(_ record: RunRecord) {
        let folder = ("folder", record.folder)
        Counter(label: "ferry_runs_total", dimensions: [folder, ("trigger", record.trigger.rawValue),
                                                         ("outcome", record.outcome)]).increment()
        for moved in record.moved {
            let dimensions = [folder, ("queue", moved.queue), ("direction", moved.direction)]
            Counter(label: "ferry_files_transferred_total", dimensions: dimensions).increment(by: moved.files)
            Counter(label: "ferry_bytes_transferred_total", dimensions: dimensions).increment(by: Int(moved.bytes))
        }
        Counter(label: "ferry_failures_total", dimensions: [folder, ("class", "retried")]).increment(by: record.retriedFailures)
        Counter(label: "ferry_failures_total", dimensions: [folder, ("class", "permanent")]).increment(by: record.permanentFailures)
        Counter(label: "ferry_conflicts_total", dimensions: [folder]).increment(by: record.conflicts)
        Counter(label: "ferry_resumed_bytes_total", dimensions: [folder]).increment(by: Int(record.resumedBytes))
        FloatingPointCounter(label: "ferry_offline_seconds_total", dimensions: [folder]).increment(by: record.offlineSeconds)
        Gauge(label: "ferry_last_run_peak_bytes_per_second", dimensions: [folder]).record(record.peakBytesPerSecond)
        Gauge(label: "ferry_last_run_end_timestamp_seconds", dimensions: [folder]).record(record.endedAt)
    }
}
