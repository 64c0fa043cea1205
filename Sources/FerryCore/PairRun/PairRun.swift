import FerryBundles
import FerryConfig
import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

/// Options of one push or pull, from the command line.
public struct RunOptions: Sendable {
    public var dryRun = false
    /// `--delete`: remove files on the target that the source lacks.
    public var mirror = false
    public var maxDeletes: Int?
    public var forceDeletes = false
    /// `--accept-changes` (or the control API): a run held before (`ChangeHold`) goes on:
    /// no replacement or content hold, and no deletion limit.
    public var acceptChanges = false
    /// `--transfers N`: overrides `transfers.max`.
    public var transfers: Int?
    /// `--bwlimit RATE`: overrides `transfers.bandwidth`; 0 means unlimited.
    public var bandwidthLimit: Int64?
    /// The host name in conflict copies' names (sanitised); nil means this machine's.
    public var hostName: String?
    /// Paths left out of this run because they are still being written (the watcher has
    /// not seen them settle); they are neither planned nor sent.
    public var holdBack: Set<String> = []
    /// Files whose modification time is within the quiet period are left out as not yet
    /// settled: the safety net for files that changed when nothing was watching.
    public var settleCutoff: SettleCutoff?
    /// Told of the files the scan leaves out as too fresh (`settleCutoff`) as it finds them,
    /// with their modification times: the daemon offers them to the running push once they
    /// have settled, rather than after it.
    public var onFreshHeldBack: (@Sendable (_ modified: [String: Double]) -> Void)?
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
    /// What the watcher saw, when that is all this run is for (`PairRunner`): planned
    /// without walking the tree where it can be (`PairRun.planWatchedChanges`).
    public var watchedChanges: WatchedChanges?
    /// `--ignore-hidden-names`: as the folder's `hidden_names: ignore`.
    public var ignoresHiddenNames = false
    /// `--full`: list the remote even when a push could trust the journal's view of it
    /// (`remote_check`).
    public var fullListing = false
    /// The engine's clock: its retry delays, probes and commit deadlines, and the run's
    /// start (`wallTime`). Tests pass one that does not wait.
    public var clock: any FerryClock = SystemClock()
    /// How long a write lease lasts without renewal (`WriteLease`); tests shorten it
    /// (`FERRY_WRITE_LEASE_SECONDS`) to see a crashed holder outlived.
    public var writeLeaseSeconds: Double = RunOptions.standardWriteLeaseSeconds

    static let standardWriteLeaseSeconds: Double = ProcessInfo.processInfo.environment["FERRY_WRITE_LEASE_SECONDS"]
        .flatMap(Double.init).map { max(1, $0) } ?? 120

    public init() {}
}

/// One push or pull of one folder pair, start to end: lock, scan, list, plan, record the
/// plan, run the jobs, report.
public struct PairRun: Sendable {
    public let pair: FolderPair
    public let config: Config
    /// The state folder: its journal, history, locks and device identity.
    public let state: StateFolder
    public let options: RunOptions
    public let sink: any RunEventSink
    public let progress: RunProgress

    public init(pair: FolderPair, config: Config, state: StateFolder, options: RunOptions,
                sink: any RunEventSink, progress: RunProgress) {
        self.pair = pair
        self.config = config
        self.state = state
        self.options = options
        self.sink = sink
        self.progress = progress
    }

    /// What the setup phase derives from the configuration.
    struct Rules {
        var classifier: QueueClassifier
        var ignore: GlobSet
        var archiveMatcher: GlobSet?
        /// The run's bandwidth limit (the command line's, else the configuration's), shared
        /// by the engine and the bundle transfers.
        var throttle: ByteThrottle?
    }

    /// The journal as the run holds it: nil on a dry run that finds none; the pair's row,
    /// and the pair's lock while the run lasts.
    struct OpenJournal {
        var journal: Journal?
        var pairRecord: FolderPairRecord?
        var lock: RunLock?
        /// The journal's check, still running (nil for a dry run).
        var check: JournalCheck?
        var pairId: Int64 { pairRecord?.id ?? 0 }
        /// The journal, if it knows this pair (a first dry run reads nothing).
        var pairJournal: Journal? { pairRecord == nil ? nil : journal }
    }

    /// The remote side as this run sees it: files by relative path, with the bundles'
    /// catalog folded in.
    struct RemoteSnapshot {
        var files: [String: RemoteEntry]
        /// The remote side is the journal's (no listing this run: `remote_check`).
        var fromJournal = false
        /// Only these folders were listed (relative to the root); the journal holds the rest
        /// (`PairRun.snapshotChangedFolders`).
        var relisted: Set<String>?
        /// The listing, walked while planning reads it.
        var stream: RemoteListingStream?
        var catalog: BundleCatalog
        var bundles: BundleTransfers
        /// Why the remote side may be incomplete (`PairRun.mergeCatalog`).
        var incomplete: String?
        /// Listed names that clash by Unicode normalization (`NormalizationClash`).
        var clashes: [[String]] = []
        /// A pull or sync with no catalog of hidden names, whose listing is streamed: whether
        /// the server hides names is asked once the listing has been read (`mergeCatalog`).
        var checksCatalogAfterListing = false
        /// What the other writers' change markers said (a pull or sync).
        var markers: MarkerView?
        /// Modification times the remote catalog keeps for a store that keeps none, by path
        /// (`KeptFileTime`): downloads set these rather than the upload's time.
        var keptTimes: [String: KeptFileTime] = [:]

        /// Whether the remote was listed in full (not taken from the journal, in whole or in part).
        var listedEverything: Bool { !fromJournal && relisted == nil }

        /// Hands the files over (to planning, which lets go of them part by part).
        mutating func takeRemoteSide() -> PagedPlanning.RemoteSide {
            defer { files = [:] }
            if let stream { return .stream(stream) }
            if let relisted { return .journalExcept(folders: relisted, listed: files) }
            return fromJournal ? .journal : .listed(files)
        }
    }

    /// The run, phase by phase: setup, journal and lock, local scan, remote snapshot, plan,
    /// then (unless a dry run) execute and bundles. Each phase throws a `RunError` naming
    /// itself, with the cause.
    public func run() async throws(RunError) -> RunSummary {
        if pair.mode != .pull, !pair.rights.mayWrite {
            throw RunError(.setup, "folder '\(pair.name)' may not write to its remote (remote_rights has no write): "
                + "only ferry pull runs it")
        }
        if pair.mode != .pull, pair.savesVersions, !pair.backend.capabilities.serverSideCopy {
            throw RunError(.setup, FolderSelection.cannotKeepVersions(pair))
        }
        guard !pair.rights.mayDelete else { return try await runAnyRights() }
        let result: Result<RunSummary, RunError> = await HousekeepingDeletions.$allowed.withValue(false) {
            do throws(RunError) {
                return .success(try await runAnyRights())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private func runAnyRights() async throws(RunError) -> RunSummary {
        let started = options.clock.now()
        var summary = RunSummary(folder: pair.name, mode: pair.mode, dryRun: options.dryRun)
        let rules = try setUp()
        let opened = try await openJournal()
        defer {
            withExtendedLifetime(opened.lock) {}
            opened.check?.cancel()
        }
        var (snapshot, plan, now): (RemoteSnapshot, Plan, Double)
        let wholeTree: Bool
        if let planned = try await planWatchedChanges(opened: opened, rules: rules) {
            (snapshot, plan, now) = planned
            wholeTree = false
        } else {
            (snapshot, plan, now) = try await scanListAndPlan(opened: opened, rules: rules, summary: &summary)
            wholeTree = true
        }
        // A store that cannot keep concurrent writers apart (`WriteLease`): the jobs run
        // while this device holds the folder's write lease. Another device that wrote
        // between a sync's look and the lease announced it in its change marker: the
        // plan is then made again, holding the lease. A push needs no new plan: it keeps
        // whatever version it finds under a name, planned or not.
        var lease: WriteLeaseKeeper?
        if !options.dryRun, let keeper = try await writeLeaseKeeper(opened: opened) {
            let listing = try await take(keeper)
            lease = keeper
            if pair.mode == .sync,
               Self.otherMarkersMoved(in: listing, since: snapshot.markers, own: try markerWriterName(pairId: opened.pairId)) {
                summary = RunSummary(folder: pair.name, mode: pair.mode, dryRun: options.dryRun)
                do {
                    (snapshot, plan, now) = try await scanListAndPlan(opened: opened, rules: rules, summary: &summary)
                } catch {
                    await keeper.release()
                    throw error
                }
            }
        }
        let partition = BundlePlanner.partition(jobs: plan.jobs, catalog: snapshot.catalog, mode: pair.mode,
                                                // No new bundles where the folder may not delete:
                                                // a bundle is retired by deleting it.
                                                rule: pair.rights.mayDelete ? config.archive : nil,
                                                matcher: rules.archiveMatcher, now: now)
        if options.dryRun {
            reportDryRun(plan, partition: partition)
        } else {
            if !plan.abandonedDownloads.isEmpty, let local = try? LocalFolder(pair: pair) {
                for path in plan.abandonedDownloads { local.removePartialDownload(of: path) }
            }
            // Every remote_check, and in runs that upload: a run that learnt from the
            // journal or change markers that nothing changed sends no request for it.
            // Aborting an unfinished upload is a deletion request (S3's AbortMultipartUpload).
            if pair.mode != .pull, pair.rights.mayDelete {
                let hasJobs = (try? await opened.journal?.pendingJobTotals(pairId: opened.pairId).isEmpty) == false
                if snapshot.listedEverything || hasJobs { await abortAbandonedUploads(opened) }
            }
            do {
                try await execute(partition, snapshot: snapshot, opened: opened, rules: rules, now: now, lease: lease,
                                  wholeTree: wholeTree, summary: &summary)
            } catch {
                await lease?.release()
                throw error
            }
            await lease?.release()
        }
        // Counted here, on the open journal: the history would otherwise open it again
        // after the run, a second WAL and checkpoint for one `COUNT(*)`.
        if !options.dryRun { summary.trackedFiles = try? await opened.journal?.fileCount() }
        // A held-back file that settled and joined the running push is not waiting any more.
        if let feed = options.jobFeed { summary.heldBack.removeAll(where: feed.took) }
        summary.elapsedSeconds = options.clock.now() - started
        sink.emit(.summary(summary))
        return summary
    }

    /// The local scan, the remote snapshot and the plan made from them.
    private func scanListAndPlan(opened: OpenJournal, rules: Rules,
                                 summary: inout RunSummary) async throws(RunError) -> (RemoteSnapshot, Plan, Double) {
        var snapshot: RemoteSnapshot
        let plan: Plan
        let now: Double
        do throws(RunError) {
            try await requireRemoteFolder(firstRun: opened.pairRecord?.lastRunAt == nil)
            let scan = try await scanLocal(ignore: rules.ignore)
            now = options.clock.wallTime()
            snapshot = try await snapshotRemote(opened: opened, rules: rules, now: now)
            if let incomplete = snapshot.incomplete { summary.incomplete.append(incomplete) }
            plan = try await makePlan(scan: scan, remote: snapshot.takeRemoteSide(), snapshot: snapshot,
                                      opened: opened, rules: rules, now: now, summary: &summary)
        } catch {
            // A damaged journal may have failed a read before its check answered; its
            // damage is what to repair first, whatever else failed.
            if let failure = await opened.check?.failure() { throw failure }
            throw error
        }
        // Nothing is transferred from a damaged journal's plan.
        if let failure = await opened.check?.failure() { throw failure }
        if let stream = snapshot.stream, snapshot.checksCatalogAfterListing {
            var none: [String: RemoteEntry] = [:]
            if let incomplete = try await mergeCatalog(nil, known: [], into: &none, listedAny: await stream.fileCount > 0,
                                                       opened: opened) {
                snapshot.incomplete = incomplete
                summary.incomplete.append(incomplete)
            }
        }
        return (snapshot, plan, now)
    }

    /// Setup: the queue rules, the ignore patterns and the archive rule, checked.
    private func setUp() throws(RunError) -> Rules {
        let bandwidth = options.bandwidthLimit ?? config.transfers.bandwidthLimit
        let throttle = bandwidth.flatMap { $0 > 0 ? ByteThrottle(bytesPerSecond: $0, clock: options.clock) : nil }
        do {
            let archiveMatcher: GlobSet?
            if let rule = config.archive {
                archiveMatcher = try GlobSet(rule.match)
            } else {
                archiveMatcher = nil
            }
            return Rules(classifier: try QueueClassifier(rules: config.queues, defaultQueue: config.defaultQueue),
                         ignore: try PairIgnores.globSet(pair: pair, config: config, stateDirectory: stateDirectory),
                         archiveMatcher: archiveMatcher, throttle: throttle)
        } catch {
            throw RunError(.setup, error.description)
        }
    }

    var stateDirectory: String { state.directory }

    /// Journal and lock: opened and checked (a dry run only reads, and may find none), the
    /// pair's row, and the pair's lock.
    private func openJournal() async throws(RunError) -> OpenJournal {
        let journalPath = state.journalPath
        var check: JournalCheck?
        do {
            if options.dryRun {
                let journal = try await state.existingJournal()
                let record = try await journal?.findFolderPair(localRoot: pair.localRoot, remoteLocation: pair.remoteLocation)
                return OpenJournal(journal: journal, pairRecord: record, lock: nil)
            }
            let opened = try await state.journal()
            // quick_check reads every page but not index contents; it runs while the run
            // scans and plans (`JournalCheck`).
            check = JournalCheck(journal: opened, path: journalPath)
            let record = try await opened.folderPair(name: pair.name, localRoot: pair.localRoot, remoteLocation: pair.remoteLocation,
                                                     at: options.clock.wallTime())
            let lock = try await Self.lock(stateDirectory: stateDirectory, pairId: record.id ?? 0, wait: options.waitForLock,
                                           clock: options.clock)
            // Read again under the lock: a run that held it may have changed the row since
            // (its queue rules, which decide whether this run classifies every file again).
            let current = try await opened.findFolderPair(localRoot: pair.localRoot, remoteLocation: pair.remoteLocation)
            return OpenJournal(journal: opened, pairRecord: current ?? record, lock: lock, check: check)
        } catch let error as JournalError {
            if let failure = await check?.failure() { throw failure }
            throw RunError(.journal, error.description, cause: .journal(error))
        } catch let error as RunError {
            throw error
        } catch let error as RunLockError {
            throw RunError(.lock, "\(pair.localRoot): \(error.message)")
        } catch is CancellationError {
            throw RunError(.lock, "\(pair.localRoot): stopped while waiting for the folder's lock", cause: .stopped)
        } catch {
            throw RunError(.journal, "\(error)")
        }
    }

    /// Local scan: the folder's files as a stream in path order, without those still
    /// being written (held back, and listed in the summary after planning); a pull creates
    /// its folder first.
    private func scanLocal(ignore: GlobSet) async throws(RunError) -> LocalScanStream {
        if pair.mode == .pull && !options.dryRun {
            do {
                try LocalFileSystem.makeDirectories(pair.localRoot)
            } catch {
                throw RunError(.localScan, "cannot create the local folder: \(error.description)", cause: .backend(BackendError(error)))
            }
        }
        let walk: LocalTreeWalk?
        do {
            if pair.mode == .pull, (try? LocalFileSystem.metadataFollowingLinks(pair.localRoot)) == nil {
                walk = nil
            } else {
                walk = try LocalTreeWalk(root: pair.localRoot, ignore: ignore, followSymlinks: config.scan.followSymlinks)
            }
        } catch {
            throw RunError(.localScan, "cannot scan \(pair.localRoot): \(error.description)", cause: .backend(error))
        }
        let sink = self.sink
        return LocalScanStream(walk: walk, holdBack: options.holdBack, settleCutoff: options.settleCutoff,
                               onFresh: options.onFreshHeldBack ?? { _ in }) { note in
            sink.emit(.skipped(path: note.path, reason: note.reason.rawValue + (note.detail.map { ": \($0)" } ?? "")))
        }
    }

    /// Remote snapshot: the listing (told about hidden folders known locally or from the
    /// journal, which some servers leave out), split from the bundles' folder, with the
    /// bundled files added from their catalog.
    private func snapshotRemote(opened: OpenJournal, rules: Rules, now: Double) async throws(RunError) -> RemoteSnapshot {
        if let snapshot = try await journalSnapshot(opened: opened, rules: rules, now: now) { return snapshot }
        let markers = try await lookAtChangeMarkers(opened: opened, now: now)
        switch markers?.decision {
        case .unchanged:
            return RemoteSnapshot(files: [:], fromJournal: true, catalog: BundleCatalog(), bundles: bundleTransfers(opened: opened, rules: rules),
                                  incomplete: nil, markers: markers)
        case let .folders(folders):
            if let markers { return try await snapshotChangedFolders(folders, markers: markers, opened: opened, rules: rules) }
        case .listEverything, nil:
            break
        }
        let known = try await knownHiddenNames(opened: opened, rules: rules, markers: markers)
        let bundles = bundleTransfers(opened: opened, rules: rules)
        // Nothing to merge into the listing by path (no hidden names from a catalog, no
        // bundled files): the listing is walked as planning goes, a folder at a time.
        var bundleCatalog: BundleCatalog?
        if known.remoteCatalog?.entries.isEmpty ?? true && known.catalogEntries.isEmpty {
            let catalog = try await listBundleCatalog(bundles)
            if catalog.members.isEmpty {
                return streamedSnapshot(catalog: catalog, bundles: bundles, known: known, rules: rules, markers: markers)
            }
            bundleCatalog = catalog
        }
        var remote: [String: RemoteEntry] = [:]
        var clashes: [[String]] = []
        // Archive bundles live in a hidden folder that nginx leaves out of listings.
        var bundleListing: [RemoteEntry] = []
        do {
            let listing = try await pair.backend.listTree(pair.remoteRoot, hints: known.hints.union([BundleNaming.folder(in: pair.remoteRoot)]),
                                                          bounds: config.listingBounds, waitToRetry: remoteRetryWait)
            (remote, bundleListing) = Self.remoteContent(of: listing, pair: pair, ignore: rules.ignore)
            // Before the map above merged them: one listed name in two Unicode forms.
            clashes = NormalizationClash.groups(in: listing.lazy.compactMap { entry in
                entry.kind == .file ? entry.path.relative(to: pair.remoteRoot)?.string : nil
            }.filter { remote[$0] != nil })
        } catch {
            throw listingFailure(error)
        }

        // Bundled files count as present on the remote (docs/archive-bundles.md).
        var catalog: BundleCatalog
        if let bundleCatalog {
            catalog = bundleCatalog
        } else {
            catalog = try await bundles.loadCatalog(listed: bundleListing, writes: !options.dryRun,
                                                    maxMembers: config.listingBounds.maxEntries)
        }
        catalog.addVirtualEntries(to: &remote, root: pair.remoteRoot, ignore: rules.ignore)
        let incomplete = try await mergeCatalog(known.remoteCatalog, known: known.catalogEntries, into: &remote,
                                                listedAny: !remote.isEmpty, opened: opened)
        return RemoteSnapshot(files: remote, catalog: catalog, bundles: bundles, incomplete: incomplete, clashes: clashes,
                              markers: markers, keptTimes: Self.keptTimes(in: known.remoteCatalog))
    }

    /// Names below hidden folders that the listing must be told about (some servers leave
    /// them out) or that are merged into it: what Ferry put on the remote under hidden names.
    private struct KnownHiddenNames {
        /// Hidden folders to list although a listing may not show them.
        var hints: Set<RelativePath>
        /// The remote's catalog (a pull or sync).
        var remoteCatalog: RemoteCatalog?
        /// What the journal knows this device put there (a push or sync).
        var catalogEntries: [RemoteCatalog.Entry]
    }

    private func knownHiddenNames(opened: OpenJournal, rules: Rules, markers: MarkerView?) async throws(RunError) -> KnownHiddenNames {
        // The journal is read a page at a time while planning (`PagedPlanning`); here only
        // its hidden paths, which the listing must be told about, with the local ones.
        let localHiddenFolders = await LocalScanner(root: pair.localRoot, ignore: rules.ignore,
                                                    followSymlinks: config.scan.followSymlinks).hiddenFolders()
        var knownPaths: [String] = []
        do {
            knownPaths += try await opened.pairJournal?.hiddenPaths(pairId: opened.pairId) ?? []
        } catch {
            throw RunError(.journal, error.description, cause: .journal(error))
        }
        let remoteCatalog = try await loadCatalog(pairId: opened.pairId, markers: markers)
        knownPaths += remoteCatalog?.entries.map(\.path) ?? []
        let catalogEntries: [RemoteCatalog.Entry]
        do {
            catalogEntries = pair.mode == .pull ? [] : try await opened.pairJournal?.catalogEntries(pairId: opened.pairId) ?? []
        } catch {
            throw RunError(.journal, error.description, cause: .journal(error))
        }
        let hints = Self.hiddenFolders(in: knownPaths, below: pair.remoteRoot)
            .union(localHiddenFolders.compactMap { try? RelativePath($0) }.map(pair.remoteRoot.appending))
        return KnownHiddenNames(hints: hints, remoteCatalog: remoteCatalog, catalogEntries: catalogEntries)
    }

    /// The bundles' folder listed alone (it holds files only) and its catalog read.
    private func listBundleCatalog(_ bundles: BundleTransfers) async throws(RunError) -> BundleCatalog {
        let listed: [RemoteEntry]
        do {
            listed = try await pair.backend.list(BundleNaming.folder(in: pair.remoteRoot), waitToRetry: remoteRetryWait)
                .filter { $0.kind == .file }
        } catch where error.code == .notFound {
            listed = []
        } catch {
            throw listingFailure(error)
        }
        return try await bundles.loadCatalog(listed: listed, writes: !options.dryRun, maxMembers: config.listingBounds.maxEntries)
    }

    /// A snapshot whose listing is walked while planning reads it, a folder at a time.
    private func streamedSnapshot(catalog: BundleCatalog, bundles: BundleTransfers, known: KnownHiddenNames, rules: Rules,
                                  markers: MarkerView?) -> RemoteSnapshot {
        let skipped: Set<RelativePath> = [BundleNaming.folder(in: pair.remoteRoot), pair.trash.remoteFolder(root: pair.remoteRoot),
                                          RemoteCatalog.folder(in: pair.remoteRoot), VersionName.folder(root: pair.remoteRoot)]
        let walk = RemoteTreeWalk(top: pair.remoteRoot, hints: known.hints, skipped: skipped, bounds: config.listingBounds,
                                  waitToRetry: remoteRetryWait)
        return RemoteSnapshot(files: [:], stream: RemoteListingStream(walk: walk, backend: pair.backend, ignore: rules.ignore),
                              catalog: catalog, bundles: bundles, incomplete: nil,
                              checksCatalogAfterListing: known.remoteCatalog == nil, markers: markers,
                              keptTimes: Self.keptTimes(in: known.remoteCatalog))
    }

    /// The catalog's kept times by path.
    static func keptTimes(in catalog: RemoteCatalog?) -> [String: KeptFileTime] {
        var times: [String: KeptFileTime] = [:]
        for time in catalog?.times ?? [] { times[time.path] = time }
        return times
    }

    /// After a listing, or the look at the remote folder, failed: waits the retry policy's
    /// delay on the run's clock and says to ask again; false at once when the policy gives
    /// up (or the error is not worth another try).
    var remoteRetryWait: @Sendable (BackendError, Int) async -> Bool {
        let policy = config.retry
        let clock = options.clock
        return { error, failures in
            guard error.isRetryable, policy.allowsAnotherAttempt(afterFailures: failures) else { return false }
            await clock.sleep(for: policy.delay(afterFailures: failures, for: error))
            return true
        }
    }

    /// A listing that failed, said once: the backend's message names the URL it tried.
    private func listingFailure(_ error: BackendError) -> RunError {
        RunError(.remoteListing, "cannot list \(pair.remoteLocation): \(error.message)" + (error.cause.map { ": \($0)" } ?? ""),
                 cause: .backend(error))
    }

    /// The archive bundles' step of this run, its work folder emptied (unless a dry run).
    func bundleTransfers(opened: OpenJournal, rules: Rules) -> BundleTransfers {
        let bundles = BundleTransfers(
            pair: pair, rule: config.archive, journal: opened.pairJournal, pairId: opened.pairId,
            workDirectory: PairWorkDirectory.path(in: stateDirectory, pairId: opened.pairId), retry: config.retry,
            freeSpaceReserve: config.transfers.minFreeSpace, throttle: rules.throttle, progress: progress, sink: sink,
            archivesRank: rules.classifier.rank(of: BundleTransfers.queue), clock: options.clock)
        if !options.dryRun { bundles.clearWorkDirectory() }
        return bundles
    }

    /// Plan: the three views merged page by page into jobs, written to the journal before
    /// the first job starts (`PagedPlanning`); conflicts are reported.
    private func makePlan(scan: LocalScanStream, remote: consuming PagedPlanning.RemoteSide, snapshot: RemoteSnapshot,
                          opened: OpenJournal, rules: Rules, now: Double,
                          summary: inout RunSummary) async throws(RunError) -> Plan {
        let plan: Plan
        do {
            // Listed names in two Unicode forms are known before planning; local ones are
            // found folder by folder as the scan is read.
            var frozen: Set<String> = []
            for group in snapshot.clashes { frozen.formUnion(group) }
            var planning = PagedPlanning(
                journal: opened.pairJournal, pairId: opened.pairId,
                options: planOptions(at: now),
                classifier: rules.classifier, now: now, writesChanges: !options.dryRun)
            planning.keepsJobs = keepsJobs(snapshot)
            if options.dryRun && !planning.keepsJobs && pair.mode != .sync {
                // Shown as planned, in path order, and not kept (`reportDryRun` then has none).
                let sink = self.sink
                planning.reportsJobs = { jobs in
                    for job in jobs { sink.emit(Self.plannedEvent(job, queue: job.queue)) }
                }
            }
            planning.frozen = frozen
            let sampler = ContentSampler(localRoot: pair.localRoot, backend: pair.backend, remoteRoot: pair.remoteRoot)
            planning.contentLooks = { files in await sampler.looks(of: files) }
            planning.queuesCurrent = opened.pairRecord?.queueRules == rules.classifier.rulesText
            plan = try await planning.plan(local: scan, remote: remote)
        } catch {
            switch error {
            case let .plan(failure):
                throw RunError(failure.hold == nil ? .plan : .hold, failure.message, cause: failure.hold.map(RunError.Cause.hold))
            case let .journal(failure): throw RunError(.journal, failure.description, cause: .journal(failure))
            case let .scan(failure):
                throw RunError(.localScan, "cannot scan \(pair.localRoot): \(failure.description)", cause: .backend(failure))
            case let .listing(failure):
                throw listingFailure(failure)
            }
        }
        summary.heldBack = await scan.heldBack
        reportNormalizationClashes(local: await scan.clashes.map(\.paths),
                                   remote: snapshot.clashes + (await snapshot.stream?.clashes.map(\.paths) ?? []), summary: &summary)
        summary.skippedFiles = plan.unchangedCount + plan.adoptedCount
        summary.conflictFiles = plan.conflicts.count
        summary.conflicts = plan.conflicts.map { RunSummary.Failure(path: $0.path, message: $0.lastError ?? "conflict") }
        for conflict in plan.conflicts {
            sink.emit(.conflict(path: conflict.path, queue: conflict.queue, message: conflict.lastError ?? "conflict"))
        }
        return plan
    }

    /// A dry run reports what it would do; files that go through a bundle are shown in the
    /// archives queue, as a run reports them.
    private func reportDryRun(_ plan: Plan, partition: BundlePlanner.Partition) {
        let bundled = Set(partition.newBundles.joined().map(\.path) + partition.restores.values.joined().map(\.path))
        for job in plan.jobs {
            let queue = bundled.contains(job.path) ? BundleTransfers.queue : job.queue
            sink.emit(Self.plannedEvent(job, queue: queue))
        }
    }

    private static func plannedEvent(_ job: FileRecord, queue: String) -> RunEvent {
        .planned(path: job.path, queue: queue, action: job.action ?? .upload, bytes: job.transferBytes)
    }

    /// Execute and bundles: the engine runs the jobs (read back from the journal a page at a
    /// time, or the ones the bundles left), then the bundles, then the run is recorded.
    /// `wholeTree`: the plan looked at every local file (not only settled new ones).
    private func execute(_ partition: BundlePlanner.Partition, snapshot: RemoteSnapshot, opened: OpenJournal, rules: Rules,
                         now: Double, lease: WriteLeaseKeeper?, wholeTree: Bool,
                         summary: inout RunSummary) async throws(RunError) {
        guard let journal = opened.journal else { throw RunError(.journal, "internal error: no journal open") }
        let pairId = opened.pairId
        let local: LocalFolder
        do {
            local = try LocalFolder(pair: pair)
        } catch {
            throw RunError(.execute, "cannot open the local folder: \(error.description)", cause: .backend(error))
        }
        let temporaryTag = try deviceTag()
        do {
            if wholeTree { try await journal.confirmScan(pairId: pairId, at: now) }
            // A cache budget decides which new files fit before any is fetched.
            var admission = CacheAdmissionStep.Result()
            if let limit = pair.localLimit, pair.mode != .push {
                admission = try await CacheAdmissionStep(limit: limit, journal: journal, pairId: pairId, folder: local.root,
                                                         sink: sink, folderName: pair.name).run(now: now)
                summary.evictedFiles += admission.evicted.files
                summary.evictedBytes += admission.evicted.bytes
                summary.leftRemoteFiles = admission.leftRemote.count
            }

            let engine = makeEngine(journal: journal, local: local, snapshot: snapshot, rules: rules, now: now,
                                    temporaryTag: temporaryTag, lease: lease)
            // Without bundles in play the engine reads its jobs back from the journal, a
            // page at a time; with them, it takes what the bundles left.
            let pages = keepsJobs(snapshot)
                ? PendingJobPages(jobs: partition.engineJobs.filter {
                                      (options.queues?.contains($0.queue) ?? true) && !admission.leftRemote.contains($0.path)
                                  },
                                  classifier: rules.classifier)
                : try await PendingJobPages(journal: journal, pairId: pairId, classifier: rules.classifier, queues: options.queues)
            try await notePendingChanges(journal: journal, pairId: pairId,
                                         bundlesChange: !partition.newBundles.isEmpty || !partition.leavingBundles.isEmpty
                                            || !partition.bundledDeletions.isEmpty)
            if let lease {
                // Renewed while the jobs run; leaving this scope cancels the renewal.
                async let _: Void = lease.keepRenewing()
                try await engine.run(pages: pages, summary: &summary)
            } else {
                try await engine.run(pages: pages, summary: &summary)
            }
            // Bundles are the archives queue: after everything else.
            if !Task.isCancelled && options.queues?.contains(BundleTransfers.queue) ?? true {
                try await runBundles(partition, snapshot: snapshot, summary: &summary)
            }
            if !Task.isCancelled, let failure = await saveCatalog(journal: journal, pairId: pairId, summary: summary, now: now) {
                summary.incomplete.append(failure)
            }
            if !Task.isCancelled, let failure = await publishChangeMarker(journal: journal, pairId: pairId, summary: summary, startedAt: now) {
                summary.incomplete.append(failure)
            }
            // A run stopped part-way (the daemon stopping) did not complete: its last-run
            // time stays as it was.
            if !Task.isCancelled {
                try await recordCompletedRun(journal: journal, pairId: pairId, snapshot: snapshot, rules: rules, now: now,
                                             local: local, keep: admission.onDemand, summary: &summary)
            }
        } catch {
            throw RunError(.execute, error.description, cause: .journal(error))
        }
    }

    /// The engine of this run, with its executor: the run's journal writer, clock, limits,
    /// feed and the write lease it holds.
    private func makeEngine(journal: Journal, local: LocalFolder, snapshot: RemoteSnapshot, rules: Rules, now: Double,
                            temporaryTag: String?, lease: WriteLeaseKeeper?) -> TransferEngine {
        let writer = RunJournalWriter(journal: journal, sink: sink)
        return TransferEngine(
            executor: TransferExecutor(pair: pair, local: local, journal: journal, writer: writer, clock: options.clock,
                                       freeSpaceReserve: config.transfers.minFreeSpace,
                                       planOptions: planOptions(at: now),
                                       compareMaxSize: config.transfers.compareMaxSize,
                                       temporaryTag: temporaryTag, writeLease: lease, keptTimes: snapshot.keptTimes),
            writer: writer,
            classifier: rules.classifier,
            queueCaps: config.queues.map(\.concurrency),
            globalCap: options.transfers ?? config.transfers.maxConcurrent,
            retry: config.retry,
            throttle: rules.throttle,
            progress: progress,
            sink: sink,
            sharedThrottles: options.sharedThrottles,
            queueThrottles: options.queueThrottles,
            feed: options.jobFeed,
            clock: options.clock)
    }

    /// The archive bundles' part of the run: new bundles up and members that left retired
    /// (not in a pull), bundled files restored (not in a push).
    private func runBundles(_ partition: BundlePlanner.Partition, snapshot: RemoteSnapshot,
                            summary: inout RunSummary) async throws(JournalError) {
        let bundles = snapshot.bundles
        if pair.mode != .pull {
            if let rule = config.archive {
                try await bundles.uploadBundles(partition.newBundles, format: rule, summary: &summary)
            }
            try await bundles.retireMembers(leaving: partition.leavingBundles, deletions: partition.bundledDeletions,
                                            catalog: snapshot.catalog, summary: &summary)
        }
        if pair.mode != .push {
            try await bundles.restoreBundled(partition.restores, catalog: snapshot.catalog, summary: &summary)
        }
    }

    /// What a run that was not stopped records: its time, the listing and the change markers
    /// it saw, then the trash's expiry and the cache budget's evictions.
    private func recordCompletedRun(journal: Journal, pairId: Int64, snapshot: RemoteSnapshot, rules: Rules, now: Double,
                                    local: LocalFolder, keep: Set<String>, summary: inout RunSummary) async throws(JournalError) {
        try await journal.recordRun(pairId: pairId, at: options.clock.wallTime(), queueRules: rules.classifier.rulesText)
        if !snapshot.fromJournal && snapshot.relisted == nil && snapshot.incomplete == nil {
            try await journal.recordListing(pairId: pairId, at: now)
        }
        if let markers = snapshot.markers, snapshot.incomplete == nil {
            try await journal.recordSeenChangeMarkers(pairId: pairId, markers.seen)
        }
        if pair.mode == .sync && pair.trash.enabled {
            await purgeTrash(now: now, remoteToo: snapshot.listedEverything)
        }
        if let limit = pair.localLimit, pair.mode != .push {
            let evicted = try await CacheEviction(limit: limit, journal: journal, pairId: pairId, folder: local.root,
                                                  sink: sink, keep: keep).run(now: options.clock.wallTime())
            summary.evictedFiles += evicted.files
            summary.evictedBytes += evicted.bytes
            if evicted.stillOver {
                sink.emit(.skipped(path: pair.localRoot, reason: "still over local_limit: the files left are not "
                    + "yet on the remote, pending, or in a kept queue"))
            }
        }
    }

    /// With bundles in play the plan's jobs stay in memory for the bundle planner.
    private func keepsJobs(_ snapshot: RemoteSnapshot) -> Bool {
        BundlePlanner.mayTakeJobs(rule: config.archive, catalog: snapshot.catalog)
    }

    /// Folders with a hidden component (`.thumbnails`) among the paths known locally or
    /// from the journal, as remote paths: some servers leave such names out of listings,
    /// so the remote walk is told to look for them.
    /// A listing of the pair's remote split into its files (by path below the root, ignored
    /// names left out) and the archive bundles' folder. The remote trash is never content,
    /// whatever the mode: a pull must not fetch it and a mirror push must not delete it.
    static func remoteContent(of listing: [RemoteEntry], pair: FolderPair, ignore: GlobSet)
        -> (files: [String: RemoteEntry], bundles: [RemoteEntry]) {
        var files: [String: RemoteEntry] = [:]
        var bundles: [RemoteEntry] = []
        let remoteTrash = pair.trash.remoteFolder(root: pair.remoteRoot)
        for entry in listing {
            if entry.path.relative(to: remoteTrash) != nil { continue }
            guard let relative = entry.path.relative(to: pair.remoteRoot), !relative.isRoot else { continue }
            // Ferry's own records of the pair, never content.
            if let first = relative.components.first, first == RemoteCatalog.folderName || first == VersionName.folderName { continue }
            if relative.components.first == BundleNaming.folderName {
                bundles.append(entry)
                continue
            }
            if ignore.matches(relative.string) { continue }
            files[relative.string] = entry
        }
        return (files, bundles)
    }

    /// Fails every file whose name clashes by Unicode normalization on its side (the plan
    /// left them alone).
    private func reportNormalizationClashes(local: [[String]], remote: [[String]], summary: inout RunSummary) {
        for (side, groups) in [("local", local), ("remote", remote)] {
            for group in groups {
                for path in group {
                    let message = NormalizationClash.message(for: path, in: group, side: side)
                    summary.failedFiles += 1
                    summary.failures.append(RunSummary.Failure(path: path, message: message))
                    sink.emit(.failed(path: path, queue: "", message: message, willRetry: false, attempt: 1))
                }
            }
        }
    }

    /// Whether a path has a component starting with `.`.
    static func isHidden(_ path: String) -> Bool {
        path.hasPrefix(".") || path.contains("/.")
    }

    static func hiddenFolders(in paths: [String], below root: RelativePath) -> Set<RelativePath> {
        var folders: Set<RelativePath> = []
        for text in paths where isHidden(text) {
            guard let path = try? RelativePath(text) else { continue }
            var folder = path.parent
            while let current = folder, !current.isRoot {
                if current.components.contains(where: { $0.hasPrefix(".") }) { folders.insert(root.appending(current)) }
                folder = current.parent
            }
        }
        return folders
    }

    /// This state folder's device id for temporary upload names, in a two-way sync only:
    /// push and pull keep the plain names, which earlier versions' partial uploads have.
    func deviceTag() throws(RunError) -> String? {
        // A push into a folder that keeps every version promises that a version another
        // device pushes at the same moment is kept too: the two must not share a temporary file.
        guard pair.mode == .sync || (pair.mode == .push && pair.savesVersions) else { return nil }
        do throws(SystemError) {
            return try DeviceIdentity.id(stateDirectory: stateDirectory)
        } catch {
            throw RunError(.execute, "cannot keep this device's id in the state folder: \(error.description)")
        }
    }

    /// Conflict policies and names of this run, for a two-way sync.
    /// How this run plans (and how a job that finds look-alike copies different decides again).
    func planOptions(at now: Double) -> PlanOptions {
        PlanOptions(mode: pair.mode, mirror: options.mirror, maxDeletes: options.maxDeletes,
                    maxDeleteShare: config.transfers.maxDeleteShare, forceDeletes: options.forceDeletes || options.acceptChanges,
                    sync: pair.mode == .push ? nil : syncSettings(at: now),
                    holds: options.acceptChanges ? nil : config.holds, mayDeleteRemote: pair.rights.mayDelete)
    }

    func syncSettings(at now: Double) -> SyncPlanSettings {
        SyncPlanSettings(conflicts: ConflictPolicies(folder: pair.conflict, rules: config.queues),
                         host: options.hostName ?? SyncPlanSettings.sanitisedHost(DeviceIdentity.name(stateDirectory: stateDirectory)),
                         stamp: TrashExpiry.stamp(at: now), usesTrash: pair.trash.enabled)
    }

    /// Removes trash folders past their retention on both sides. A failure here loses
    /// nothing (the trash stays a little longer), so it is reported and the run goes on.
    /// `remoteToo`: the remote trash is listed only in runs that list the remote in full
    /// (every `remote_check`): retention is days, and a run that learnt from the change
    /// markers that little changed sends no request for it.
    private func purgeTrash(now: Double, remoteToo: Bool) async {
        let keep = pair.trash.keepSeconds
        let localFolder = pair.trash.localFolder(root: pair.localRoot)
        do {
            try await BlockingIO.run { () throws(BackendError) in try TrashExpiry.purgeLocal(localFolder, now: now, keepSeconds: keep) }
        } catch {
            sink.emit(.skipped(path: localFolder, reason: "cannot empty expired trash: \(error.description)"))
        }
        guard remoteToo, pair.rights.mayDelete else { return }
        let remoteFolder = pair.trash.remoteFolder(root: pair.remoteRoot)
        do {
            try await TrashExpiry.purgeRemote(remoteFolder, backend: pair.backend, now: now, keepSeconds: keep)
        } catch {
            sink.emit(.skipped(path: remoteFolder.description, reason: "cannot empty expired remote trash: \(error.description)"))
        }
    }

    /// Uploads left unfinished on the remote longer than the backend's setting, and not
    /// meant to be continued, are aborted (`AbandonedUploadSweep`). A failure here loses
    /// nothing (the parts stay a little longer), so it is reported and the run goes on.
    private func abortAbandonedUploads(_ opened: OpenJournal) async {
        guard let journal = opened.journal, opened.pairRecord != nil else { return }
        do {
            _ = try await AbandonedUploadSweep.run(pair, journal: journal, pairId: opened.pairId, olderThanSeconds: nil)
        } catch {
            sink.emit(.skipped(path: pair.remoteRoot.description, reason: "cannot abort abandoned uploads: \(error)"))
        }
    }

    /// The pair's lock; with `wait`, waited for until the holder lets go or the task is
    /// cancelled.
    static func lock(stateDirectory: String, pairId: Int64, wait: Bool, clock: any FerryClock) async throws -> RunLock {
        guard wait else { return try RunLock.acquire(stateDirectory: stateDirectory, pairId: pairId) }
        return try await RunLock.acquireWaiting(stateDirectory: stateDirectory, pairId: pairId, clock: clock)
    }
}
