import FerryPluginAPI
import Foundation

/// Options of one push or pull, from the command line.
public struct RunOptions: Sendable {
    public var dryRun = false
    /// `--delete`: remove files on the target that the source lacks.
    public var mirror = false
    public var maxDeletes: Int?
    public var forceDeletes = false
    /// `--transfers N`: overrides `transfers.max`.
    public var transfers: Int?
    /// `--bwlimit RATE`: overrides `transfers.bandwidth`; 0 means unlimited.
    public var bandwidthLimit: Int64?
    /// Paths left out of this run because they are still being written (the watcher has
    /// not seen them settle); they are neither planned nor sent.
    public var holdBack: Set<String> = []
    /// Files modified after this time (seconds since 1970) are left out as not yet settled:
    /// the safety net for files that changed when nothing was watching.
    public var settledBefore: Double?
    /// Only jobs of these queues run (a schedule restricted to `archives`); the others stay
    /// queued in the journal. nil for all.
    public var queues: Set<String>?
    /// Limits shared with other runs (a remote's bandwidth timetable), on top of this run's.
    public var sharedThrottles: [ByteThrottle] = []
    /// Limits per queue, shared with other runs.
    public var queueThrottles: [String: ByteThrottle] = [:]
    /// When another process holds the pair's lock: wait for it (the daemon) instead of
    /// failing with who holds it (a command run by hand).
    public var waitForLock = false
    /// Jobs handed to the engine while it runs (`PairRunner` feeds newly settled files).
    public var jobFeed: JobFeed?

    public init() {}
}

/// One push or pull of one folder pair, start to end: lock, scan, list, plan, record the
/// plan, run the jobs, report.
public struct SyncRun: Sendable {
    public let pair: FolderPair
    public let config: Config
    public let stateDirectory: String
    public let options: RunOptions
    public let sink: any RunEventSink
    public let progress: RunProgress

    public init(pair: FolderPair, config: Config, stateDirectory: String, options: RunOptions,
                sink: any RunEventSink, progress: RunProgress) {
        self.pair = pair
        self.config = config
        self.stateDirectory = stateDirectory
        self.options = options
        self.sink = sink
        self.progress = progress
    }

    public func run() async throws(RunError) -> RunSummary {
        let started = ContinuousClock.now
        var summary = RunSummary(folder: pair.name, mode: pair.mode, dryRun: options.dryRun)
        let classifier: QueueClassifier
        let ignore: GlobSet
        do {
            classifier = try QueueClassifier(rules: config.queues, defaultQueue: config.defaultQueue)
            ignore = try GlobSet(ScanSettings.builtInIgnores + config.scan.ignore + pair.ignore)
        } catch {
            throw RunError(error.description)
        }

        let journalPath = StateLocation.journalPath(in: stateDirectory)
        let journal: Journal?
        var pairRecord: FolderPairRecord?
        var lock: RunLock?
        do {
            if options.dryRun {
                journal = try Journal.openForReading(at: journalPath)
                pairRecord = try await journal?.findFolderPair(localRoot: pair.localRoot, remoteLocation: pair.remoteLocation)
            } else {
                let opened = try Journal.open(at: journalPath)
                // quick_check reads every page but not index contents: a few ms per
                // thousand files, cheap next to a run, and it keeps a damaged journal from
                // steering transfers.
                if let problem = try await opened.integrityProblems(quick: true).first {
                    throw RunError("the journal \(journalPath) is damaged (\(problem)); run ferry doctor, then move it aside and run again to rebuild it from both sides")
                }
                journal = opened
                let record = try await opened.folderPair(name: pair.name, localRoot: pair.localRoot, remoteLocation: pair.remoteLocation)
                pairRecord = record
                lock = try await Self.lock(stateDirectory: stateDirectory, pairId: record.id ?? 0, wait: options.waitForLock)
            }
        } catch let error as JournalError {
            throw RunError(error.description)
        } catch let error as RunError {
            throw error
        } catch let error as RunLockError {
            throw RunError("\(pair.localRoot): \(error.message)")
        } catch {
            throw RunError("\(error)")
        }
        defer { withExtendedLifetime(lock) {} }
        let pairId = pairRecord?.id ?? 0

        // Scan the local side.
        if pair.mode == .pull && !options.dryRun {
            do {
                try LocalFileSystem.makeDirectories(pair.localRoot)
            } catch {
                throw RunError("cannot create the local folder: \(error.description)")
            }
        }
        var scan: ScanResult
        do {
            if pair.mode == .pull, (try? LocalFileSystem.metadataFollowingLinks(pair.localRoot)) == nil {
                scan = ScanResult(entries: [], notes: [])
            } else {
                scan = try await LocalScanner(root: pair.localRoot, ignore: ignore,
                                              followSymlinks: config.scan.followSymlinks).scan()
            }
        } catch {
            throw RunError("cannot scan \(pair.localRoot): \(error.description)")
        }
        if !options.holdBack.isEmpty || options.settledBefore != nil {
            scan = Self.withoutUnsettled(scan, holdBack: options.holdBack, settledBefore: options.settledBefore,
                                         summary: &summary)
        }
        for note in scan.notes {
            sink.emit(.skipped(path: note.path, reason: note.reason.rawValue + (note.detail.map { ": \($0)" } ?? "")))
        }

        let now = Date().timeIntervalSince1970
        // The journal is read a page at a time while planning (`PagedPlanning`); here only
        // its hidden paths, which the listing must be told about.
        let pairJournal = pairRecord == nil ? nil : journal
        var knownPaths = scan.entries.map(\.path.string)
        do {
            knownPaths += try await pairJournal?.hiddenPaths(pairId: pairId) ?? []
        } catch {
            throw RunError(error.description)
        }

        // List the remote side.
        var remote: [String: RemoteEntry] = [:]
        let hints = Self.hiddenFolders(in: knownPaths, below: pair.remoteRoot)
        do {
            let policy = config.retry
            let listing = try await pair.backend.listTree(pair.remoteRoot, hints: hints) { error, failures in
                guard error.isRetryable, policy.allowsAnotherAttempt(afterFailures: failures) else { return nil }
                return policy.delay(afterFailures: failures, for: error)
            }
            for entry in listing {
                guard let relative = entry.path.relative(to: pair.remoteRoot), !relative.isRoot else { continue }
                if ignore.matches(relative.string) { continue }
                remote[relative.string] = entry
            }
        } catch {
            var failure = RunError("cannot list \(pair.remoteLocation): \(error.description)")
            failure.remoteUnreachable = error.suggestsOutage
            throw failure
        }

        // The plan is on disk before the first job starts (PagedPlanning writes it).
        let plan: Plan
        do {
            plan = try await PagedPlanning(
                journal: pairJournal, pairId: pairId,
                options: PlanOptions(mode: pair.mode, mirror: options.mirror, maxDeletes: options.maxDeletes,
                                     maxDeleteShare: config.transfers.maxDeleteShare, forceDeletes: options.forceDeletes),
                classifier: classifier, now: now, writesChanges: !options.dryRun
            ).plan(scan: scan, remote: remote)
        } catch {
            switch error {
            case let .plan(failure): throw RunError(failure.message)
            case let .journal(failure): throw RunError(failure.description)
            }
        }
        summary.skippedFiles = plan.unchangedCount + plan.adoptedCount
        summary.conflictFiles = plan.conflicts.count
        summary.conflicts = plan.conflicts.map { RunSummary.Failure(path: $0.path, message: $0.lastError ?? "conflict") }
        for conflict in plan.conflicts {
            sink.emit(.conflict(path: conflict.path, queue: conflict.queue, message: conflict.lastError ?? "conflict"))
        }

        if options.dryRun {
            for job in plan.jobs {
                sink.emit(.planned(path: job.path, queue: job.queue, action: job.action ?? .upload, bytes: job.transferBytes))
            }
            summary.elapsedSeconds = seconds(since: started)
            sink.emit(.summary(summary))
            return summary
        }

        guard let journal else { throw RunError("internal error: no journal open") }
        do {
            try await journal.confirmScan(pairId: pairId, at: now)

            let bandwidth = options.bandwidthLimit ?? config.transfers.bandwidthLimit
            let jobs = options.queues.map { queues in plan.jobs.filter { queues.contains($0.queue) } } ?? plan.jobs
            let engine = TransferEngine(
                executor: TransferExecutor(pair: pair, journal: journal,
                                           freeSpaceReserve: config.transfers.minFreeSpace),
                journal: journal,
                classifier: classifier,
                queueCaps: config.queues.map(\.concurrency),
                globalCap: options.transfers ?? config.transfers.maxConcurrent,
                retry: config.retry,
                throttle: bandwidth.flatMap { $0 > 0 ? ByteThrottle(bytesPerSecond: $0) : nil },
                progress: progress,
                sink: sink,
                sharedThrottles: options.sharedThrottles,
                queueThrottles: options.queueThrottles,
                feed: options.jobFeed)
            try await engine.run(jobs: jobs, summary: &summary)
            // A run stopped part-way (the daemon stopping) did not complete: its last-run
            // time stays as it was.
            if !Task.isCancelled {
                try await journal.recordRun(pairId: pairId, at: Date().timeIntervalSince1970)
            }
        } catch {
            throw RunError(error.description)
        }
        summary.elapsedSeconds = seconds(since: started)
        sink.emit(.summary(summary))
        return summary
    }

    /// Folders with a hidden component (`.thumbnails`) among the paths known locally or
    /// from the journal, as remote paths: some servers leave such names out of listings,
    /// so the remote walk is told to look for them.
    static func hiddenFolders(in paths: [String], below root: RemotePath) -> Set<RemotePath> {
        var folders: Set<RemotePath> = []
        for text in paths where text.contains("/.") || text.hasPrefix(".") {
            guard let path = try? RemotePath(text) else { continue }
            var folder = path.parent
            while let current = folder, !current.isRoot {
                if current.components.contains(where: { $0.hasPrefix(".") }) { folders.insert(root.appending(current)) }
                folder = current.parent
            }
        }
        return folders
    }

    /// The pair's lock; with `wait`, polled once a second until the holder lets go or the
    /// task is cancelled.
    static func lock(stateDirectory: String, pairId: Int64, wait: Bool) async throws -> RunLock {
        while true {
            do {
                return try RunLock.acquire(stateDirectory: stateDirectory, pairId: pairId)
            } catch {
                guard wait, !Task.isCancelled else { throw error }
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// The scan without the files still being written, which are listed in the summary.
    static func withoutUnsettled(_ scan: ScanResult, holdBack: Set<String>, settledBefore: Double?,
                                 summary: inout RunSummary) -> ScanResult {
        let cutoff = settledBefore.map { Int64($0 * 1e9) }
        var kept = scan
        kept.entries = scan.entries.filter { entry in
            let path = entry.path.string
            if holdBack.contains(path) || cutoff.map({ entry.version.modifiedNanos > $0 }) ?? false {
                summary.heldBack.append(path)
                return false
            }
            return true
        }
        return kept
    }

    private func seconds(since start: ContinuousClock.Instant) -> Double {
        start.duration(to: .now).inSeconds
    }
}

/// A run that could not start or had to stop as a whole (as opposed to single files failing).
public struct RunError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// The remote did not answer (as opposed to refusing): a long-running process marks it
    /// offline and tries again.
    public var remoteUnreachable = false
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
