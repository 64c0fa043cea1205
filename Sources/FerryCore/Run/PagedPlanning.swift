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
        func precedes(_ lhs: String, _ rhs: String) -> Bool { lhs.precedesInUTF8Order(rhs) }
        var listing: RemoteListingStream?
        var fromJournal = false
        var relisted: Set<String> = []
        switch consume side {
        case let .listed(remote): listing = RemoteListingStream(files: remote)
        case let .stream(stream): listing = stream
        case .journal: fromJournal = true
        case let .journalExcept(folders, listed):
            fromJournal = true
            relisted = folders
            listing = RemoteListingStream(files: listed)
        }
        // Each side is read a batch ahead (`ReadAhead`); what was read and is past the
        // part being planned waits in these (at most a batch each).
        let pairId = pairId, pageSize = pageSize
        // The quick check settles rows by their local version only: the remote side must be
        // the rows' own, and an unchanged file must keep its queue (`ScanReconciler`).
        let quickCheck = usesQuickCheck && fromJournal && queuesCurrent && options.mode == .push
        var readRows: ReadAhead<PageRow, JournalError>.Read?
        if let journal {
            readRows = { last throws(JournalError) in
                if quickCheck {
                    try await journal.quickCheckRows(pairId: pairId, after: last?.path, limit: pageSize).map(PageRow.quick)
                } else {
                    try await journal.records(pairId: pairId, after: last?.path, limit: pageSize).map(PageRow.whole)
                }
            }
        }
        var readListing: ReadAhead<(key: String, value: RemoteEntry), BackendError>.Read?
        if let listing {
            readListing = { _ throws(BackendError) in try await listing.next(limit: pageSize) }
        }
        let journalPages = ReadAhead(batchSize: pageSize, read: readRows)
        let scanBatches = ReadAhead<LocalEntry, BackendError>(batchSize: pageSize) { _ throws(BackendError) in try await local.next(limit: pageSize) }
        let listingBatches = ReadAhead(batchSize: pageSize, read: readListing)
        var page: [PageRow] = []
        var listed: [(key: String, value: RemoteEntry)] = []
        var remoteCount = 0
        var scanned: [(path: String, entry: LocalEntry)] = []
        var total = Plan(changedRecords: [], forgottenPaths: [], jobs: [], conflicts: [], unchangedCount: 0, adoptedCount: 0)
        var heldDeletions: [FileRecord] = []
        var remoteDeletions = 0
        var localDeletions = 0
        var remoteReplacements = 0
        var localReplacements = 0
        var replacementSample = ReplacementSample(capacity: HoldPolicy.sampleSize)
        // Two-way sync: files gone locally that may have been renamed (few, even when the
        // plan is large); their new names are looked for once every part is written.
        var vanished: [FileRecord] = []
        var frozen = FrozenPaths(paths: self.frozen)
        let streamsJobs = !writesChanges && reportsJobs != nil
        // A part's rows are written while the next part is planned (one write at a time):
        // the rows a part writes are all in it, so no read of a later part waits for them.
        var writing: (task: Task<Result<Void, JournalError>, Never>, rows: Int)?
        func finishWriting() async throws(Failure) {
            guard let pending = writing else { return }
            writing = nil
            do throws(JournalError) { try await pending.task.value.get() } catch { throw .journal(error) }
        }

        do throws(Failure) {
            while true {
                if page.isEmpty {
                    do throws(JournalError) {
                        page = try await journalPages.take()
                    } catch {
                        throw .journal(error)
                    }
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
                    do throws(BackendError) {
                        listed = try await listingBatches.take()
                    } catch {
                        throw .listing(error)
                    }
                    frozen.add(remote: await listing.clashes)
                }
                // A part ends at the first of the last paths read of the sides not yet read to
                // their end; so a part is small whichever side is large (a first push has an
                // empty journal and a huge scan). After the last part, everything that is left.
                // Each side's rows written by a part are in the part: no read ahead sees them.
                var upper: String?
                for candidate in [journalPages.ended ? nil : page.last?.path,
                                  scanBatches.ended ? nil : scanned.last?.path,
                                  listingBatches.ended ? nil : listed.last?.key] {
                    if let candidate, upper.map({ precedes(candidate, $0) }) ?? true { upper = candidate }
                }
                let isLast = upper == nil
                func inPart(_ path: String) -> Bool {
                    upper.map { !precedes($0, path) } ?? true
                }
                // Most parts take the whole page: handed over, not copied.
                var partRows: [PageRow]
                if let pageEnd = page.firstIndex(where: { !inPart($0.path) }) {
                    partRows = Array(page[..<pageEnd])
                    page.removeSubrange(..<pageEnd)
                } else {
                    partRows = page
                    page = []
                }
                let scanEnd = scanned.firstIndex { !inPart($0.path) } ?? scanned.count
                var partScanned = scanned[..<scanEnd].filter { !frozen.contains($0.path) }
                scanned.removeSubrange(..<scanEnd)
                if quickCheck, let journal {
                    let settled = try await settle(&partRows, scanned: &partScanned, journal: journal)
                    total.unchangedCount += settled
                    total.localFileCount += settled
                    total.quickCheckedCount += settled
                    remoteCount += settled
                }
                let partScan = partScanned.map(\.entry)
                var partRemote: [String: RemoteVersion] = [:]
                var listedPaths: [String] = []
                let listedEnd = listed.firstIndex { !inPart($0.key) } ?? listed.count
                for (key, value) in listed[..<listedEnd] where !frozen.contains(key) {
                    partRemote[key] = RemoteVersion(value)
                    listedPaths.append(key)
                }
                remoteCount += listedEnd
                listed.removeSubrange(..<listedEnd)
                var records: [String: FileRecord] = [:]
                records.reserveCapacity(partRows.count)
                if fromJournal { partRemote.reserveCapacity(partRemote.count + partRows.count) }
                var rowPaths: [String] = []
                rowPaths.reserveCapacity(partRows.count)
                for case let .whole(record) in partRows where !frozen.contains(record.path) {
                    records[record.path] = record
                    rowPaths.append(record.path)
                    if fromJournal, let version = record.remote,
                       relisted.isEmpty || !relisted.contains(ChangeMarker.folder(of: record.path)) {
                        // Keyed as the remote spells the name, as a listing would be.
                        partRemote[record.remoteSpelling ?? record.path] = version
                        remoteCount += 1
                    }
                }
                let readAhead: Int = page.count + scanned.count + listed.count
                let inFlight: Int = journalPages.inFlight + scanBatches.inFlight + listingBatches.inFlight
                let held: Int = records.count + partScan.count + partRemote.count
                total.peakPartRows = max(total.peakPartRows, held + readAhead + inFlight + (writing?.rows ?? 0))
                let heldBack = unsettled.union(await local.heldBack)
                let (merged, requeued) = ScanReconciler.reconcile(records: records, scan: ScanResult(entries: partScan, notes: []),
                                                                  pairId: pairId, classifier: classifier, now: now,
                                                                  unsettled: heldBack, queuesCurrent: queuesCurrent)
                // A file still being written is left out of this run, but once settled it
                // replaces its remote version all the same: its new content counts in the
                // content hold's sample. Otherwise a folder rewritten wholesale, seen by a
                // watcher in pieces, sends the first settled files in a run too small to
                // hold, before the rest settle and are held.
                if !heldBack.isEmpty {
                    for path in rowPaths where heldBack.contains(path) {
                        guard let record = records[path], record.status == .inSync, let remote = record.remote else { continue }
                        replacementSample.offer(path, remote: remote, remoteName: record.remoteSpelling)
                    }
                }
                // Rows, scanned files and listed files each come in path order: merged, not sorted.
                let order = SortedPathUnion.of([rowPaths, partScan.map(\.path.string), listedPaths])
                let part = Planner.planPart(pairId: pairId, records: merged, remote: partRemote, options: options,
                                            classifier: classifier, now: now, order: order,
                                            queuesCurrent: queuesCurrent, requeued: requeued)
                // Written jobs stay in the journal (the engine reads them back a page at a
                // time); only a plan that is not written keeps them, to be shown, or one whose
                // jobs are sorted further (`keepsJobs`).
                if streamsJobs {
                    reportsJobs?(part.jobs)
                } else if keepsJobs || !writesChanges {
                    total.jobs += part.jobs
                }
                remoteDeletions += part.jobs.count { $0.action == .deleteRemote }
                localDeletions += part.jobs.count { $0.action == .deleteLocal }
                for job in part.jobs {
                    let replaces = Planner.replaces(job)
                    if replaces.remote, let remote = job.remote {
                        remoteReplacements += 1
                        replacementSample.offer(job.path, remote: remote, remoteName: job.remoteSpelling)
                    }
                    if replaces.local { localReplacements += 1 }
                }
                if options.mode == .sync {
                    let resumed = Set(part.resumedDisplacements)
                    vanished += part.jobs.filter { RenameDetection.mayBeRenamedAway($0) && !resumed.contains($0.path) }
                }
                total.resumedDisplacements += part.resumedDisplacements
                total.conflicts += part.conflicts
                total.unchangedCount += part.unchangedCount
                total.adoptedCount += part.adoptedCount
                total.localFileCount += part.localFileCount
                total.abandonedDownloads += part.abandonedDownloads
                let isDeletion = { (record: FileRecord) in record.action?.isDeletion == true }
                heldDeletions += part.changedRecords.filter(isDeletion)
                let written = part.changedRecords.filter { !isDeletion($0) }
                if writesChanges, let journal {
                    try await finishWriting()
                    let deletions = part.forgottenPaths.map { (pairId: pairId, path: $0) }
                    writing = (Task { () -> Result<Void, JournalError> in
                        do throws(JournalError) {
                            return .success(try await journal.apply(upserts: written, deletions: deletions))
                        } catch {
                            return .failure(error)
                        }
                    }, written.count + deletions.count)
                } else if !streamsJobs {
                    total.changedRecords += written
                    total.forgottenPaths += part.forgottenPaths
                }
                if isLast { break }
            }
        } catch {
            // Nothing is left writing once planning has failed.
            _ = await writing?.task.value
            throw error
        }
        try await finishWriting()

        if !vanished.isEmpty {
            let renames = try await findRenames(of: vanished, plannedJobs: total.jobs, resumed: Set(total.resumedDisplacements))
            if !renames.isEmpty {
                total.jobs = RenameDetection.applying(renames, to: total.jobs)
                remoteDeletions -= renames.count
                // The MOVE jobs are written with the deletions, whether or not their rows
                // changed; the new names wait for the MOVE without an upload job of their own.
                let moves = RenameDetection.applying(renames, to: renames.map(\.from))
                let renamed = Set(moves.map(\.path))
                heldDeletions = heldDeletions.filter { !renamed.contains($0.path) } + moves
                if writesChanges, let journal {
                    do {
                        try await journal.apply(upserts: try await waitingForMove(renames, journal: journal), deletions: [])
                    } catch {
                        throw .journal(error)
                    }
                }
            }
        }
        do throws(PlanError) {
            try Planner.checkDeletions(remoteDeletions: remoteDeletions, localDeletions: localDeletions,
                                       remoteFiles: remoteCount, localFiles: total.localFileCount, options: options)
            // Content first: "they look encrypted" says more than "too many changed".
            if let policy = options.holds, policy.checksContent, let contentLooks, remoteReplacements > 0,
               let hold = policy.contentHold(await contentLooks(replacementSample.files)) {
                throw PlanError(hold: hold)
            }
            try Planner.checkReplacements(remote: remoteReplacements, local: localReplacements,
                                          remoteFiles: remoteCount, localFiles: total.localFileCount, options: options)
        } catch {
            throw .plan(error)
        }
        if writesChanges, let journal {
            do {
                try await journal.apply(upserts: heldDeletions, deletions: [])
            } catch {
                throw .journal(error)
            }
        } else if !streamsJobs {
            total.changedRecords += heldDeletions
        }
        total.jobs = Planner.ranked(total.jobs, classifier: classifier)
        return total
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
