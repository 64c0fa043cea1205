import FerryPluginAPI

/// Plans a folder pair a page of journal rows at a time, so that a journal of a million
/// files is never in memory at once: each page of rows (in path order) is merged with the
/// scanned and listed paths up to its last path, planned (`Planner.planPart`), and its
/// changed rows written before the next page is read.
///
/// The deletion guard needs every part's decisions, so rows whose job is a deletion are
/// held back and written only once the guard has passed; a refused plan leaves no
/// deletion in the journal.
struct PagedPlanning {
    /// Journal rows per page.
    static let pageSize = 10_000

    var journal: Journal?
    var pairId: Int64
    var options: PlanOptions
    var classifier: QueueClassifier
    var now: Double
    /// False for `--dry-run`: the plan is made, nothing is written.
    var writesChanges: Bool
    var pageSize = PagedPlanning.pageSize

    enum Failure: Error {
        case plan(PlanError)
        case journal(JournalError)
    }

    func plan(scan: ScanResult, remote: [String: RemoteEntry]) async throws(Failure) -> Plan {
        // Paths joined once (RemotePath.string joins its components on every call).
        let scanned = scan.entries.map { (path: $0.path.string, entry: $0) }
            .sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        let listed = remote.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        var scanIndex = 0
        var listedIndex = 0
        var total = Plan(changedRecords: [], forgottenPaths: [], jobs: [], conflicts: [], unchangedCount: 0, adoptedCount: 0)
        var heldDeletions: [FileRecord] = []
        var after: String?

        while true {
            let page: [FileRecord]
            do {
                page = try await journal?.records(pairId: pairId, after: after, limit: pageSize) ?? []
            } catch {
                throw .journal(error)
            }
            let isLast = page.count < pageSize
            // Everything up to the page's last path belongs to this part; after the last
            // page, everything that is left.
            let upper = isLast ? nil : page.last?.path
            func inPart(_ path: String) -> Bool {
                upper.map { !$0.utf8.lexicographicallyPrecedes(path.utf8) } ?? true
            }
            var partScan: [LocalEntry] = []
            while scanIndex < scanned.count, inPart(scanned[scanIndex].path) {
                partScan.append(scanned[scanIndex].entry)
                scanIndex += 1
            }
            var partRemote: [String: RemoteEntry] = [:]
            while listedIndex < listed.count, inPart(listed[listedIndex].key) {
                partRemote[listed[listedIndex].key] = listed[listedIndex].value
                listedIndex += 1
            }
            var records: [String: FileRecord] = [:]
            for record in page { records[record.path] = record }
            let merged = ScanReconciler.reconcile(records: records, scan: ScanResult(entries: partScan, notes: []),
                                                  pairId: pairId, classifier: classifier, now: now)
            let part = Planner.planPart(pairId: pairId, records: merged, remote: partRemote, options: options,
                                        classifier: classifier, now: now)
            total.jobs += part.jobs
            total.conflicts += part.conflicts
            total.unchangedCount += part.unchangedCount
            total.adoptedCount += part.adoptedCount
            total.localFileCount += part.localFileCount
            let isDeletion = { (record: FileRecord) in record.action?.isDeletion ?? false }
            heldDeletions += part.changedRecords.filter(isDeletion)
            let written = part.changedRecords.filter { !isDeletion($0) }
            if writesChanges, let journal {
                do {
                    try await journal.apply(upserts: written, deletions: part.forgottenPaths.map { (pairId: pairId, path: $0) })
                } catch {
                    throw .journal(error)
                }
            } else {
                total.changedRecords += written
                total.forgottenPaths += part.forgottenPaths
            }
            if isLast { break }
            after = upper
        }

        if options.mode == .sync {
            let renames = RenameDetection.renames(in: total.jobs)
            total.jobs = RenameDetection.applying(renames, to: total.jobs)
            // The MOVE jobs are written with the deletions, whether or not their rows changed.
            let renamed = Set(renames.map(\.from.path))
            heldDeletions = heldDeletions.filter { !renamed.contains($0.path) }
                + total.jobs.filter { renamed.contains($0.path) }
        }
        do {
            try Planner.checkDeletions(total.jobs, remoteFiles: remote.count, localFiles: total.localFileCount, options: options)
        } catch {
            throw .plan(error)
        }
        if writesChanges, let journal {
            do {
                try await journal.apply(upserts: heldDeletions, deletions: [])
            } catch {
                throw .journal(error)
            }
        } else {
            total.changedRecords += heldDeletions
        }
        total.jobs = Planner.ranked(total.jobs, classifier: classifier)
        return total
    }
}
