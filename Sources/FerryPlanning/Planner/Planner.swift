import FerryPluginAPI

/// Decides per file what a push or pull must do, from three views: the local tree (as
/// scanned), the remote listing, and what the journal recorded at the last sync.
///
/// Pure logic over values: no I/O, no clock (the time is passed in).
///
/// - push: a file new or changed locally is uploaded; a remote copy of the same size and
///   modification time is compared byte by byte first (`LookAlikeCopies`); a file whose remote copy changed since the last sync while the local one
///   did not is a conflict (pushing would destroy the remote change).
/// - pull: the mirror image, with local and remote swapped.
/// - With `mirror`, files the source side lacks are deleted on the target, within the
///   deletion guard.
public enum Planner {
    package enum Decision: Equatable {
        case inSync
        case adopt
        case transfer(FileAction)
        case delete(FileAction)
        /// A rename on one side (two-way sync): a conflict copy or a detected rename.
        case move(FileAction, target: String)
        case conflict(String)
        case localOnly
        /// Evicted by the cache budget and still on the remote: nothing to do.
        case remoteOnly
        case forget
    }

    /// The whole pair at once (`planPart` says what `requeued` is).
    public static func plan(
        pairId: Int64, records: [String: FileRecord], remote: [String: RemoteEntry],
        options: PlanOptions, classifier: QueueClassifier, now: Double, requeued: Set<String> = []
    ) throws(PlanError) -> Plan {
        var plan = planPart(pairId: pairId, records: records, remote: remote.mapValues(RemoteVersion.init), options: options,
                            classifier: classifier, now: now, requeued: requeued)
        try checkDeletions(plan.jobs, remoteFiles: remote.count, localFiles: plan.localFileCount, options: options)
        plan.jobs = ranked(plan.jobs, classifier: classifier)
        return plan
    }

    private static func sortedPaths(records: [String: FileRecord], remote: [String: RemoteVersion]) -> [String] {
        var paths = Array(records.keys)
        paths.reserveCapacity(records.count + remote.count)
        for path in remote.keys where records[path] == nil { paths.append(path) }
        paths.sort { $0.precedesInUTF8Order($1) }
        return paths
    }

    /// Whether `order` holds the paths of `expected` once each, in path order. A name in
    /// two spellings may stand in either: they sort apart, and Swift compares them as equal.
    private static func isPathOrder(_ order: [String], of expected: [String]) -> Bool {
        order.count == expected.count && Set(order) == Set(expected)
            && zip(order, order.dropFirst()).allSatisfy { $0.precedesInUTF8Order($1) }
    }

    /// The decisions for one part of the paths (a planning run may go through a large
    /// folder part by part, so that the journal is never in memory at once). Jobs come in
    /// path order and the deletion guard is not applied: `checkDeletions` and `ranked`
    /// do that over all the parts. `order`, when the caller has it, is every path of
    /// `records` and `remote` in path order, once each (a merge of sides read in that
    /// order costs less than sorting the keys again). `queuesCurrent`: the rows were
    /// classified by `classifier`'s rules (`ScanReconciler.reconcile`). `requeued`: rows
    /// whose queue (new rules) or local version the scan changed (`ScanReconciler`),
    /// written even when planning changes nothing more.
    public static func planPart(
        pairId: Int64, records: [String: FileRecord], remote: [String: RemoteVersion],
        options: PlanOptions, classifier: QueueClassifier, now: Double, order: [String]? = nil,
        queuesCurrent: Bool = false, requeued: Set<String> = []
    ) -> Plan {
        var changed: [FileRecord] = []
        var forgotten: [String] = []
        var jobs: [FileRecord] = []
        var conflicts: [FileRecord] = []
        var unchanged = 0
        var adopted = 0
        var localFiles = 0
        var abandonedDownloads: [String] = []
        var resumedDisplacements: [String] = []
        let paths = order ?? sortedPaths(records: records, remote: remote)
        assert(order.map { isPathOrder($0, of: sortedPaths(records: records, remote: remote)) } ?? true,
               "planPart: order is not the paths in path order")

        for path in paths {
            let original = records[path]
            // The listing's key is the name as the remote spells it (`remoteSpelling`).
            let listed = remote.index(forKey: path)
            let remoteVersion = listed.map { remote.values[$0] }
            let listedSpelling = listed.map { remote.keys[$0] }
            let isRequeued = !requeued.isEmpty && requeued.contains(path)
            // The usual row of a no-op run, decided where it is: copying it to change
            // nothing, and comparing the copy with it, was a twentieth of the planning.
            // (A file only on the remote is classified again under new rules, below.)
            if let original, original.isConfirmedInSync, original.remote == remoteVersion,
               original.remoteSpelling == remoteSpelling(listed: listedSpelling, path: original.path),
               queuesCurrent || original.local != nil || remoteVersion == nil,
               !isRequeued, decide(original, options: options) == .inSync {
                if original.local != nil { localFiles += 1 }
                unchanged += 1
                continue
            }
            var record = original ?? FileRecord(
                pairId: pairId, path: path,
                queue: classifier.queue(forPath: path, size: remoteVersion?.size ?? 0),
                status: .localOnly, updatedAt: now)
            // A file only on the remote goes by its remote size (a new row already did).
            if let original, original.local == nil, let remoteVersion,
               !(queuesCurrent && original.remote == remoteVersion) {
                record.queue = classifier.queue(forPath: path, size: remoteVersion.size)
            }
            record.remote = remoteVersion
            record.remoteSpelling = remoteSpelling(listed: listedSpelling, path: record.path)

            if record.local != nil { localFiles += 1 }
            var decision = decide(record, options: options)
            if remoteVersion == nil, let original, let resumed = resumedDisplacement(original, record: record, decision: decision,
                                                                                   options: options) {
                (record, decision) = resumed
                resumedDisplacements.append(path)
            }
            if let original, leftPartialDownload(original, decision: decision) { abandonedDownloads.append(original.path) }
            switch decision {
            case .forget:
                // The row's own spelling: `path` may be the listing's other form of it.
                if let original { forgotten.append(original.path) }
                continue
            case .inSync:
                record.confirmInSync()
                unchanged += 1
            case .adopt:
                record.adoptInSync(at: now)
                adopted += 1
            case let .transfer(action), let .delete(action), let .move(action, _):
                let wasSameJob = original?.action == action && (original?.status.isPending ?? false)
                record.plan(action, sameJob: wasSameJob)
                // A resumed job keeps the place it was moving to.
                if !(wasSameJob && original?.moveTarget != nil) {
                    record.moveTarget = moveTarget(for: decision, record: record, options: options)
                }
                if record != original { record.updatedAt = now }
                jobs.append(record)
            case let .conflict(reason):
                record.markConflict(reason: reason)
                if record != original { record.updatedAt = now }
                conflicts.append(record)
            case .localOnly:
                record.keepLocalOnly()
            case .remoteOnly:
                record.keepRemoteOnly()
                unchanged += 1
            }
            if record != original || isRequeued {
                if original != nil || record.status != .localOnly || record.local != nil {
                    record.updatedAt = now
                    changed.append(record)
                }
            }
        }

        return Plan(changedRecords: changed, forgottenPaths: forgotten, jobs: jobs, conflicts: conflicts,
                    unchangedCount: unchanged, adoptedCount: adopted, localFileCount: localFiles,
                    abandonedDownloads: abandonedDownloads, resumedDisplacements: resumedDisplacements)
    }

    /// A two-way job that moves the remote version aside before it replaces or deletes it
    /// (`TransferExecutor.displace`), cut short after the move (a crash, a lost answer):
    /// the name is empty because of this very job, and the version aside may be another
    /// device's, written after the listing. Taken for a deletion, that version would stay
    /// in this device's trash alone. So the job goes on from the version it planned, and
    /// looks at what it moved aside before the empty name counts for anything.
    ///
    /// Only where the empty name would lead to what such a cut-short job leads to anyway
    /// (its upload, or nothing left to delete); a file the listing makes something else of
    /// is decided from the listing.
    static func resumedDisplacement(_ original: FileRecord, record: FileRecord, decision: Decision,
                                    options: PlanOptions) -> (FileRecord, Decision)? {
        guard options.mode == .sync, let planned = original.remote, record.remote == nil,
              original.status.isPending || original.status == .syncError,
              decision == .forget || decision == .transfer(.upload) else { return nil }
        let job: Decision
        switch original.action {
        case .upload?: job = .transfer(.upload)
        case .deleteRemote?: job = .delete(.deleteRemote)
        default: return nil
        }
        var resumed = record
        resumed.remote = planned
        return decide(resumed, options: options) == job ? (resumed, job) : nil
    }

    /// A download was pending (it may have left its partial file, `.NAME.ferry-part`, in
    /// the folder when it was cut short) and the file is no longer to be downloaded: the
    /// partial file is removed, or nothing would ever remove it.
    static func leftPartialDownload(_ original: FileRecord, decision: Decision) -> Bool {
        guard original.action == .download, original.status.isPending || original.status == .syncError else { return false }
        return decision != .transfer(.download)
    }

    /// The mass-deletion guard: refuses a plan that would delete more than the allowed share
    /// (or count) of the target side's files. An unmounted disk looks like "everything was
    /// deleted".
    public static func checkDeletions(_ jobs: [FileRecord], remoteFiles: Int, localFiles: Int,
                                      options: PlanOptions) throws(PlanError) {
        try checkDeletions(remoteDeletions: jobs.count { $0.action == .deleteRemote },
                           localDeletions: jobs.count { $0.action == .deleteLocal },
                           remoteFiles: remoteFiles, localFiles: localFiles, options: options)
    }

    /// The same guard over counts of deletion jobs, for a plan made in parts. A two-way
    /// sync can lose files on both sides: each side is guarded on its own.
    public static func checkDeletions(remoteDeletions: Int, localDeletions: Int, remoteFiles: Int, localFiles: Int,
                                      options: PlanOptions) throws(PlanError) {
        if options.mode == .sync {
            try checkDeletionCount(remoteDeletions, of: remoteFiles, side: "remote", options: options)
            try checkDeletionCount(localDeletions, of: localFiles, side: "local folder", options: options)
            return
        }
        try checkDeletions(count: remoteDeletions + localDeletions, remoteFiles: remoteFiles, localFiles: localFiles,
                           options: options)
    }

    /// The one-way guard over a count of deletion jobs.
    public static func checkDeletions(count deletions: Int, remoteFiles: Int, localFiles: Int,
                                      options: PlanOptions) throws(PlanError) {
        guard deletions > 0 && !options.forceDeletes else { return }
        let targetFiles = options.mode == .push ? remoteFiles : localFiles
        let limit = options.maxDeletes ?? Int((Double(targetFiles) * options.maxDeleteShare).rounded(.down))
        if deletions > limit {
            throw PlanError(hold: ChangeHold(reason: .deletions, side: options.mode == .push ? "remote" : "local folder",
                                             count: deletions, of: targetFiles, limit: limit))
        }
    }

    private static func checkDeletionCount(_ deletions: Int, of targetFiles: Int, side: String,
                                           options: PlanOptions) throws(PlanError) {
        guard deletions > 0 && !options.forceDeletes else { return }
        let limit = options.maxDeletes ?? Int((Double(targetFiles) * options.maxDeleteShare).rounded(.down))
        if deletions > limit {
            throw PlanError(hold: ChangeHold(reason: .deletions, side: side, count: deletions, of: targetFiles, limit: limit,
                                             bothSides: true))
        }
    }

    /// The replacement hold: a plan that would overwrite more than the policy's share of a
    /// side's files (a folder rewritten wholesale) waits for a person. Uploads replace
    /// remote files, downloads local ones; a two-way sync is held for either side.
    public static func checkReplacements(remote: Int, local: Int, remoteFiles: Int, localFiles: Int,
                                         options: PlanOptions) throws(PlanError) {
        guard let policy = options.holds else { return }
        if options.mode != .pull, let hold = policy.replacementHold(replacing: remote, of: remoteFiles, side: "remote") {
            throw PlanError(hold: hold)
        }
        if options.mode != .push, let hold = policy.replacementHold(replacing: local, of: localFiles, side: "local folder") {
            throw PlanError(hold: hold)
        }
    }

    /// A job that overwrites a version the other side has: an upload over a remote file, a
    /// download over a local one.
    public static func replaces(_ job: FileRecord) -> (remote: Bool, local: Bool) {
        (job.action == .upload && job.remote != nil, job.action == .download && job.local != nil)
    }

    /// Where a job's move goes (two-way sync): a conflict copy's or rename's path, or, for
    /// a job that deletes or overwrites a file, the file's place in the run's trash folder.
    static func moveTarget(for decision: Decision, record: FileRecord, options: PlanOptions) -> String? {
        guard let sync = options.sync else { return nil }
        switch decision {
        case let .move(_, target): return target
        case let .transfer(action), let .delete(action):
            guard options.mode == .sync, sync.usesTrash else { return nil }
            let replaces: Bool
            switch action {
            case .upload, .deleteRemote: replaces = record.remote != nil
            case .download, .deleteLocal: replaces = record.local != nil
            default: replaces = false
            }
            return replaces ? sync.trashPath(for: record.path) : nil
        default: return nil
        }
    }

    /// `record` as `decision` leaves it, for a file decided again during a run (its bytes
    /// compared, or its remote version changed under a write).
    package static func applying(_ decision: Decision, to record: FileRecord, options: PlanOptions, now: Double) -> FileRecord {
        var record = record
        switch decision {
        case let .transfer(action), let .delete(action), let .move(action, _):
            record.plan(action)
            record.moveTarget = moveTarget(for: decision, record: record, options: options)
        case let .conflict(reason):
            record.markConflict(reason: reason)
        case .inSync:
            record.confirmInSync()
        case .adopt:
            record.adoptInSync(at: now)
        case .localOnly:
            record.keepLocalOnly()
        case .remoteOnly:
            record.keepRemoteOnly()
        case .forget:
            // Gone from both sides: nothing is left to decide; the next plan drops the row.
            record.confirmInSync()
        }
        record.updatedAt = now
        return record
    }

    /// Jobs in the order the scheduler should prefer: queue priority, then path.
    public static func ranked(_ jobs: [FileRecord], classifier: QueueClassifier) -> [FileRecord] {
        jobs.sorted { lhs, rhs in
            let left = classifier.rank(of: lhs.queue)
            let right = classifier.rank(of: rhs.queue)
            return left != right ? left < right : lhs.path.precedesInUTF8Order(rhs.path)
        }
    }

    /// `contentDiffers`: the two sides were read and hold different bytes although they
    /// agree on size and time, so that agreement proves nothing.
    package static func decide(_ record: FileRecord, options: PlanOptions, contentDiffers: Bool = false) -> Decision {
        let decision = decideAnyRights(record, options: options, contentDiffers: contentDiffers)
        return options.mayDeleteRemote ? decision : withoutRemoteDeletion(decision, mode: options.mode)
    }

    /// A folder without `delete` in its rights (`PlanOptions.mayDeleteRemote`) never plans
    /// to delete or rename a remote file: a push (with `--delete`) leaves the remote copy and
    /// forgets it; a sync keeps a file deleted locally on the remote only, as the cache
    /// budget keeps an evicted one, so it neither comes back nor is deleted there (a newer
    /// remote version stays remote-only too; `ferry pull FOLDER PATH` fetches it); a
    /// conflict kept both ways renames the local copy, never the remote one. Replacing a
    /// remote file is still an upload: the executor saves the old version first.
    static func withoutRemoteDeletion(_ decision: Decision, mode: SyncMode) -> Decision {
        switch decision {
        case .delete(.deleteRemote): return mode == .sync ? .remoteOnly : .forget
        case let .move(.keepBothRemoteLoses, target): return .move(.keepBothLocalLoses, target: target)
        default: return decision
        }
    }

    private static func decideAnyRights(_ record: FileRecord, options: PlanOptions, contentDiffers: Bool) -> Decision {
        // The cache budget's files (docs/cache-and-conditions.md): an evicted file is not
        // fetched again, and its absence is never a local deletion (a sync would delete
        // it on the remote); one asked for on demand is fetched whatever the mode.
        if record.isEvicted { return record.remote == nil ? .forget : .remoteOnly }
        if record.isFetchOnDemand, record.remote != nil { return .transfer(.download) }
        if options.mode == .sync {
            // Without settings (a caller that only wants the decisions): the default policy,
            // and placeholder names that nothing will use.
            return decideTwoWay(record, settings: options.sync ?? SyncPlanSettings(host: "host", stamp: "00000000-000000"),
                                contentDiffers: contentDiffers)
        }
        let local = record.local
        let remote = record.remote
        let mirror = options.mirror
        let localUnchanged = local != nil && record.syncedLocal.map { sameLocal($0, local!) } == true
        let remoteUnchanged = remote != nil && record.syncedRemote.map { $0.isSameVersion(as: remote!) } == true

        switch (local, remote) {
        case (.some, .some):
            if localUnchanged && remoteUnchanged { return .inSync }
            if !contentDiffers, let lookAlike = lookAlikeDecision(record, options: options) { return lookAlike }
            switch options.mode {
            case .push:
                if record.syncedRemote != nil && !remoteUnchanged && (localUnchanged || record.syncedLocal != nil) {
                    if let answer = oneWayAnswer(record, options: options) { return answer }
                    return .conflict(localUnchanged
                        ? "the remote copy changed since the last sync; pull it or remove one copy"
                        : "changed on both sides since the last sync")
                }
                return .transfer(.upload)
            case .pull, .sync:
                if record.syncedLocal != nil && !localUnchanged && (remoteUnchanged || record.syncedRemote != nil) {
                    if let answer = oneWayAnswer(record, options: options) { return answer }
                    return .conflict(remoteUnchanged
                        ? "the local copy changed since the last sync; push it or remove one copy"
                        : "changed on both sides since the last sync")
                }
                // A first pull into a folder that already holds a different file under the
                // name (a reinstalled laptop): the local file is no older copy of the remote
                // one, so it is kept aside under a conflict copy's name, never overwritten.
                if options.mode == .pull, record.syncedLocal == nil, record.resolution == nil, let sync = options.sync {
                    return .move(.keepBothLocalLoses, target: sync.conflictPath(for: record.path))
                }
                return .transfer(.download)
            }
        case (_?, nil):
            switch options.mode {
            case .push: return .transfer(.upload)
            case .pull, .sync: return mirror ? .delete(.deleteLocal) : .localOnly
            }
        case (nil, _?):
            switch options.mode {
            case .push: return mirror ? .delete(.deleteRemote) : .forget
            case .pull, .sync: return .transfer(.download)
            }
        case (nil, nil):
            return .forget
        }
    }

    /// A push or pull carries out a person's answer to a conflict (`ferry resolve`) as far as
    /// its direction allows, as a sync would: a pull takes the remote version (`--keep
    /// remote`) or keeps both, the local one renamed to its conflict copy; a push sends the
    /// local version (`--keep local`). The answer that would need the other direction
    /// (`--keep local` on a pull, `--keep remote` on a push) leaves both sides as they are
    /// and records them in sync, so the conflict is settled and the next change on either
    /// side is carried as usual. Nil: no answer (or keep both on a push), still a conflict.
    static func oneWayAnswer(_ record: FileRecord, options: PlanOptions) -> Decision? {
        guard let resolution = record.resolution else { return nil }
        switch (options.mode, resolution) {
        case (.pull, .remote): return .transfer(.download)
        case (.push, .local): return .transfer(.upload)
        case (.pull, .local), (.push, .remote): return .adopt
        case (.pull, .keepBoth):
            guard let sync = options.sync else { return nil }
            return .move(.keepBothLocalLoses, target: sync.conflictPath(for: record.path))
        default: return nil
        }
    }

    /// Local versions compare on size and modification time; an inode change alone (a
    /// file restored from a backup, a copy-and-rename by an editor) is not a content change.
    static func sameLocal(_ lhs: LocalVersion, _ rhs: LocalVersion) -> Bool {
        lhs.size == rhs.size && lhs.modifiedNanos == rhs.modifiedNanos
    }
}
