import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI

/// Plans a folder pair a page of journal rows at a time, so that a tree of a million files
/// is never in memory at once: the journal's rows, the local scan and the remote listing
/// are read in path order, a page of each ahead; each part (up to the first of their last
/// paths) is merged, planned (`Planner.planPart`), and its changed rows written before
/// the next part is read.
///
/// The deletion guard needs every part's decisions, so rows whose job is a deletion are
/// held back and written only once the guard has passed; a refused plan leaves no
/// deletion in the journal.
struct PagedPlanning {
    /// Journal rows per page.
    static let pageSize = 1_000

    var journal: Journal?
    var pairId: Int64
    var options: PlanOptions
    var classifier: QueueClassifier
    var now: Double
    /// False for `--dry-run`: the plan is made, nothing is written.
    var writesChanges: Bool
    var pageSize = PagedPlanning.pageSize
    /// Keep every job in `Plan.jobs` even when they are written: archive bundles take some
    /// of them out of the engine's hands.
    var keepsJobs = false
    /// A plan that is not written (`--dry-run`) hands its jobs here part by part, in path
    /// order, and keeps neither them nor its changed rows: held whole, they took 1.4 GB
    /// for a dry run of 1,000,000 new files. Left nil where the whole plan is needed
    /// (`keepsJobs`, a two-way sync's rename detection) and by tests that compare plans.
    var reportsJobs: (@Sendable ([FileRecord]) -> Void)?
    /// Paths left out of the scan because they are still being written (the watcher):
    /// not seen, but not gone either.
    var unsettled: Set<String> = []
    /// Paths not planned at all, on either side, and whose journal rows stay as they are:
    /// names that clash by Unicode normalization (`NormalizationClash`). A `Set<String>`
    /// compares canonically, so it holds every form of each name.
    var frozen: Set<String> = []
    /// The pair's rows were classified by `classifier`'s rules: unchanged files keep
    /// their queue without matching it again.
    var queuesCurrent = false
    /// A push between listings reads its rows as the quick check does (`QuickCheckRow`),
    /// and whole only where the check does not settle them. False: every row read whole
    /// (tests compare the two).
    var usesQuickCheck = true
    /// Reads what a sample of the files a push would replace look like, for the content
    /// hold (`HoldPolicy.contentHold`); nil: no content check.
    var contentLooks: (@Sendable ([SampledFile]) async -> [(path: String, look: ContentLook)])?

    enum Failure: Error {
        case plan(PlanError)
        case journal(JournalError)
        case scan(BackendError)
        case listing(BackendError)
    }

    /// Where the remote side comes from.
    enum RemoteSide: Sendable {
        /// A full listing in hand, by path below the remote root.
        case listed([String: RemoteEntry])
        /// A listing walked as planning goes.
        case stream(RemoteListingStream)
        /// The journal's rows: what Ferry put there and last saw (a push folder between
        /// full listings, `remote_check`); each row's remote version.
        case journal
        /// The journal's rows, except in these folders (relative to the remote root), whose
        /// files are these listed ones: what other writers' change markers said changed.
        case journalExcept(folders: Set<String>, listed: [String: RemoteEntry])
    }

    /// A journal row as a page brings it: whole, or as the quick check reads it.
    private enum PageRow: Sendable {
        case whole(FileRecord)
        case quick(QuickCheckRow)

        var path: String {
            switch self {
            case let .whole(record): record.path
            case let .quick(row): row.path
            }
        }
    }

    /// A scan in hand and a listing in hand (tests, and callers that have them).
    func plan(scan: consuming ScanResult, remote: consuming [String: RemoteEntry]) async throws(Failure) -> Plan {
        try await plan(local: LocalScanStream(scan: scan), remote: .listed(remote))
    }

    /// Merges the local stream, the remote side and the journal's rows part by part.
    func plan(local: LocalScanStream, remote side: consuming RemoteSide) async throws(Failure) -> Plan {
        let source = RemoteSource(side)
        // The quick check settles rows by their local version only: the remote side must be
        // the rows' own, and an unchanged file must keep its queue (`ScanReconciler`).
        let quickCheck = usesQuickCheck && source.fromJournal && queuesCurrent && options.mode == .push
        // Each side is read a batch ahead (`ReadAhead`); what was read and is past the part
        // being planned waits in `sides` (at most a batch each).
        var sides = Sides(batchSize: pageSize, readers: readers(local: local, listing: source.listing, quickCheck: quickCheck))
        let streamsJobs = !writesChanges && reportsJobs != nil
        let writer = writesChanges ? journal.map { PartWriter(journal: $0) } : nil
        var tally = PlanTally(mode: options.mode,
                              keeping: streamsJobs ? .counts : writer == nil ? .everything : keepsJobs ? .jobs : .counts)
        var frozen = FrozenPaths(paths: self.frozen)
        do throws(Failure) {
            while true {
                try await sides.refill(frozen: &frozen, local: local, listing: source.listing)
                let cut = sides.cut
                var part = sides.take(cut, frozen: frozen)
                if quickCheck, let journal {
                    tally.addSettled(try await settle(&part.rows, scanned: &part.scanned, journal: journal))
                }
                let planned = await planPart(part, remote: source, frozen: frozen, tally: &tally,
                                         alsoHeld: sides.readAhead + (writer?.rowsInFlight ?? 0), local: local)
                if streamsJobs { reportsJobs?(planned.jobs) }
                let changes = tally.add(planned)
                try await writer?.write(changes.written, forgetting: changes.forgotten.map { (pairId: pairId, path: $0) })
                if cut.isLast { break }
            }
            try await writer?.finish()
        } catch {
            // Nothing is left writing once planning has failed.
            await writer?.abandon()
            throw error
        }
        try await finish(&tally, writer: writer, streamsJobs: streamsJobs)
        var total = tally.plan
        total.jobs = Planner.ranked(total.jobs, classifier: classifier)
        return total
    }

    /// The remote side as planning reads it: a listing stream, the journal's rows' own
    /// remote versions, or both (the rows except in folders listed again).
    private struct RemoteSource {
        var listing: RemoteListingStream?
        var fromJournal = false
        var relisted: Set<String> = []

        init(_ side: consuming RemoteSide) {
            switch consume side {
            case let .listed(remote): listing = RemoteListingStream(files: remote)
            case let .stream(stream): listing = stream
            case .journal: fromJournal = true
            case let .journalExcept(folders, listed):
                fromJournal = true
                relisted = folders
                listing = RemoteListingStream(files: listed)
            }
        }
    }

    /// Plans one part: its journal rows, scanned files and listed files, all within one
    /// stretch of paths. `alsoHeld`: rows held elsewhere meanwhile (read ahead, being
    /// written), for the peak the plan reports.
    private func planPart(_ part: Sides.Part, remote source: RemoteSource, frozen: FrozenPaths, tally: inout PlanTally,
                      alsoHeld: Int, local: LocalScanStream) async -> Plan {
        var partRemote: [String: RemoteVersion] = [:]
        partRemote.reserveCapacity(part.listed.count + (source.fromJournal ? part.rows.count : 0))
        var listedPaths: [String] = []
        for (key, value) in part.listed {
            partRemote[key] = RemoteVersion(value)
            listedPaths.append(key)
        }
        tally.remoteCount += part.listedCount
        var records: [String: FileRecord] = [:]
        records.reserveCapacity(part.rows.count)
        var rowPaths: [String] = []
        rowPaths.reserveCapacity(part.rows.count)
        for case let .whole(record) in part.rows where !frozen.contains(record.path) {
            records[record.path] = record
            rowPaths.append(record.path)
            if source.fromJournal, let version = record.remote,
               source.relisted.isEmpty || !source.relisted.contains(ChangeMarker.folder(of: record.path)) {
                // Keyed as the remote spells the name, as a listing would be.
                partRemote[record.remoteSpelling ?? record.path] = version
                tally.remoteCount += 1
            }
        }
        let partScan = part.scanned.map(\.entry)
        let held = records.count + partScan.count + partRemote.count
        tally.plan.peakPartRows = max(tally.plan.peakPartRows, held + alsoHeld)
        let heldBack = unsettled.union(await local.heldBack)
        let (merged, requeued) = ScanReconciler.reconcile(records: records, scan: ScanResult(entries: partScan, notes: []),
                                                          pairId: pairId, classifier: classifier, now: now,
                                                          unsettled: heldBack, queuesCurrent: queuesCurrent)
        // A file still being written is left out of this run, but once settled it
        // replaces its remote version all the same: its new content counts in the
        // content hold's sample. Otherwise a folder rewritten wholesale, seen by a
        // watcher in pieces, sends the first settled files in a run too small to
        // hold, before the rest settle and are held.
        for path in rowPaths where !heldBack.isEmpty && heldBack.contains(path) {
            guard let record = records[path], record.status == .inSync, let remote = record.remote else { continue }
            tally.replacementSample.offer(path, remote: remote, remoteName: record.remoteSpelling)
        }
        // Rows, scanned files and listed files each come in path order: merged, not sorted.
        let order = SortedPathUnion.of([rowPaths, partScan.map(\.path.string), listedPaths])
        return Planner.planPart(pairId: pairId, records: merged, remote: partRemote, options: options,
                                classifier: classifier, now: now, order: order,
                                queuesCurrent: queuesCurrent, requeued: requeued)
    }

    /// What needs every part's decisions: renames among the vanished files, the deletion
    /// and replacement guards, and then the deletions held back until they passed.
    private func finish(_ tally: inout PlanTally, writer: PartWriter?, streamsJobs: Bool) async throws(Failure) {
        if !tally.vanished.isEmpty {
            let renames = try await findRenames(of: tally.vanished, plannedJobs: tally.plan.jobs,
                                                resumed: Set(tally.plan.resumedDisplacements))
            tally.apply(renames)
            if !renames.isEmpty, let writer {
                // The new names wait for the MOVE without an upload job of their own.
                do {
                    try await writer.journal.applyPlan(try await waitingForMove(renames, journal: writer.journal))
                } catch {
                    throw .journal(error)
                }
            }
        }
        do throws(PlanError) {
            try tally.checkDeletions(options: options)
            // Content first: "they look encrypted" says more than "too many changed".
            if let policy = options.holds, policy.checksContent, let contentLooks, tally.remoteReplacements > 0,
               let hold = policy.contentHold(await contentLooks(tally.replacementSample.files)) {
                throw PlanError(hold: hold)
            }
            try tally.checkReplacements(options: options)
        } catch {
            throw .plan(error)
        }
        if let writer {
            do {
                try await writer.journal.applyPlan(tally.heldDeletions)
            } catch {
                throw .journal(error)
            }
        } else if !streamsJobs {
            tally.plan.changedRecords += tally.heldDeletions
        }
    }

    /// What reads each side, a batch at a time.
    private func readers(local: LocalScanStream, listing: RemoteListingStream?,
                         quickCheck: Bool) -> (rows: ReadAhead<PageRow, JournalError>.Read?,
                                               scan: ReadAhead<LocalEntry, BackendError>.Read,
                                               listing: ReadAhead<(key: String, value: RemoteEntry), BackendError>.Read?) {
        let pairId = pairId, pageSize = pageSize
        var rows: ReadAhead<PageRow, JournalError>.Read?
        if let journal {
            rows = { last throws(JournalError) in
                if quickCheck {
                    try await journal.quickCheckRows(pairId: pairId, after: last?.path, limit: pageSize).map(PageRow.quick)
                } else {
                    try await journal.records(pairId: pairId, after: last?.path, limit: pageSize).map(PageRow.whole)
                }
            }
        }
        var listed: ReadAhead<(key: String, value: RemoteEntry), BackendError>.Read?
        if let listing {
            listed = { _ throws(BackendError) in try await listing.next(limit: pageSize) }
        }
        return (rows, { _ throws(BackendError) in try await local.next(limit: pageSize) }, listed)
    }

    /// The three sides as read so far: each a batch ahead, with what was read and is past
    /// the part being planned (at most a batch each).
    private struct Sides {
        let journalPages: ReadAhead<PageRow, JournalError>
        let scanBatches: ReadAhead<LocalEntry, BackendError>
        let listingBatches: ReadAhead<(key: String, value: RemoteEntry), BackendError>
        var page: [PageRow] = []
        var scanned: [(path: String, entry: LocalEntry)] = []
        var listed: [(key: String, value: RemoteEntry)] = []

        /// One part's share of each side; frozen names left out.
        struct Part {
            var rows: [PageRow]
            var scanned: [(path: String, entry: LocalEntry)]
            var listed: [(key: String, value: RemoteEntry)]
            /// Listed files, frozen ones too: the remote side's count.
            var listedCount: Int
        }

        init(batchSize: Int, readers: (rows: ReadAhead<PageRow, JournalError>.Read?, scan: ReadAhead<LocalEntry, BackendError>.Read,
                                       listing: ReadAhead<(key: String, value: RemoteEntry), BackendError>.Read?)) {
            journalPages = ReadAhead(batchSize: batchSize, read: readers.rows)
            scanBatches = ReadAhead(batchSize: batchSize, read: readers.scan)
            listingBatches = ReadAhead(batchSize: batchSize, read: readers.listing)
        }

        /// Reads the next batch of each side whose last one is used up.
        mutating func refill(frozen: inout FrozenPaths, local: LocalScanStream,
                             listing: RemoteListingStream?) async throws(Failure) {
            if page.isEmpty {
                do throws(JournalError) { page = try await journalPages.take() } catch { throw .journal(error) }
            }
            if scanned.isEmpty {
                do throws(BackendError) {
                    scanned = try await scanBatches.take().map { (path: $0.path.string, entry: $0) }
                } catch {
                    throw .scan(error)
                }
                // Complete for every folder up to the last file read (`LocalScanStream`).
                frozen.add(local: await local.clashes)
            }
            if listed.isEmpty, let listing {
                do throws(BackendError) { listed = try await listingBatches.take() } catch { throw .listing(error) }
                frozen.add(remote: await listing.clashes)
            }
        }

        /// Where the next part ends: each side's rows written by a part are in the part, so
        /// no read ahead sees them.
        var cut: PartCut {
            PartCut(lastPaths: [journalPages.ended ? nil : page.last?.path,
                                scanBatches.ended ? nil : scanned.last?.path,
                                listingBatches.ended ? nil : listed.last?.key])
        }

        mutating func take(_ cut: PartCut, frozen: FrozenPaths) -> Part {
            let listedPart = cut.take(from: &listed, path: \.key)
            return Part(rows: cut.take(from: &page, path: \.path),
                        scanned: cut.take(from: &scanned, path: \.path).filter { !frozen.contains($0.path) },
                        listed: listedPart.filter { !frozen.contains($0.key) },
                        listedCount: listedPart.count)
        }

        /// Entries read, or being read, past the part in hand.
        var readAhead: Int {
            page.count + scanned.count + listed.count
                + journalPages.inFlight + scanBatches.inFlight + listingBatches.inFlight
        }
    }

    /// Writes a part's rows while the next part is planned, one write at a time: the rows a
    /// part writes are all in it, so no read of a later part waits for them.
    private final class PartWriter {
        let journal: Journal
        private var writing: (task: Task<Result<Void, JournalError>, Never>, rows: Int)?

        init(journal: Journal) {
            self.journal = journal
        }

        var rowsInFlight: Int { writing?.rows ?? 0 }

        /// Waits for the last part's write, then starts this one's.
        func write(_ rows: [FileRecord], forgetting deletions: [(pairId: Int64, path: String)]) async throws(Failure) {
            try await finish()
            let journal = journal
            writing = (Task { () -> Result<Void, JournalError> in
                do throws(JournalError) {
                    return .success(try await journal.applyPlan(rows, forgetting: deletions))
                } catch {
                    return .failure(error)
                }
            }, rows.count + deletions.count)
        }

        func finish() async throws(Failure) {
            guard let pending = writing else { return }
            writing = nil
            do throws(JournalError) { try await pending.task.value.get() } catch { throw .journal(error) }
        }

        /// Waits for the write under way, whatever its outcome.
        func abandon() async {
            _ = await writing?.task.value
            writing = nil
        }
    }

    /// The quick check of one part: rows settled in the journal whose files the scan found
    /// at the same version are taken out of the part, with those files, and counted; the
    /// rest are read whole, to be planned as usual. Both sides are in path order, so they
    /// are walked together; a path is the same only byte for byte (a name in another
    /// Unicode form is planned the long way). Returns how many files were settled.
    private func settle(_ rows: inout [PageRow], scanned: inout [(path: String, entry: LocalEntry)],
                        journal: Journal) async throws(Failure) -> Int {
        guard !rows.isEmpty else { return 0 }
        var readWhole: [String] = []
        var keptScan: [(path: String, entry: LocalEntry)] = []
        keptScan.reserveCapacity(scanned.count)
        var next = scanned.startIndex
        for case let .quick(row) in rows {
            while next < scanned.endIndex, scanned[next].path.precedesInUTF8Order(row.path) {
                keptScan.append(scanned[next])
                next += 1
            }
            if next < scanned.endIndex, !row.path.precedesInUTF8Order(scanned[next].path),
               row.isSettled, row.local == scanned[next].entry.version {
                next += 1
            } else {
                readWhole.append(row.path)
            }
        }
        keptScan += scanned[next...]
        let settled = rows.count - readWhole.count
        scanned = keptScan
        do throws(JournalError) {
            rows = try await journal.records(pairId: pairId, paths: readWhole).map(PageRow.whole)
        } catch {
            throw .journal(error)
        }
        return settled
    }

    /// The renames among the plan's jobs: new local files (upload jobs) with a vanished
    /// file's size, time and inode. A written plan's jobs are in the journal: they are read
    /// back a page per queue, keeping only those that match a vanished file.
    private func findRenames(of vanished: [FileRecord], plannedJobs: [FileRecord],
                             resumed: Set<String>) async throws(Failure) -> [RenameDetection.Rename] {
        // A plan that is not written holds every job, the vanished ones among them.
        guard writesChanges, let journal else {
            return RenameDetection.renames(in: plannedJobs, notRenamed: resumed)
        }
        let keys = Set(vanished.compactMap(RenameDetection.key(vanished:)))
        var candidates: [FileRecord] = []
        do {
            for total in try await journal.pendingJobTotals(pairId: pairId) {
                var after: String?
                while true {
                    let page = try await journal.pendingJobs(pairId: pairId, queue: total.queue, after: after, limit: pageSize)
                    candidates += page.filter { RenameDetection.key(appeared: $0).map(keys.contains) ?? false }
                    guard page.count == pageSize, let last = page.last?.path else { break }
                    after = last
                }
            }
        } catch {
            throw .journal(error)
        }
        return RenameDetection.renames(in: vanished + candidates)
    }

    /// The new names' rows with their upload jobs taken off: the MOVE brings them.
    private func waitingForMove(_ renames: [RenameDetection.Rename], journal: Journal) async throws(JournalError) -> [FileRecord] {
        var rows: [FileRecord] = []
        for rename in renames {
            guard var row = try await journal.record(pairId: pairId, path: rename.to) else { continue }
            row.waitForMove()
            row.updatedAt = now
            rows.append(row)
        }
        return rows
    }
}
