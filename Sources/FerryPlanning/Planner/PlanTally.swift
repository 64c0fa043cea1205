/// A paged plan's running totals: what each part (`Planner.planPart`) adds to the whole
/// plan, the counts the deletion and replacement guards need, the sample of replaced files
/// for the content hold, and the deletions held back until the guards have passed. Pure:
/// it says what a part's writer must write, and writes nothing.
package struct PlanTally: Sendable {
    /// What the plan keeps of its parts beyond the counts.
    package enum Keeping: Sendable {
        /// Everything: jobs and changed rows (a plan that is not written, shown whole).
        case everything
        /// The jobs only: the rows are written as the parts go (`keepsJobs`).
        case jobs
        /// Nothing: the rows are written, or the jobs handed on part by part.
        case counts
    }

    package var plan = Plan(changedRecords: [], forgottenPaths: [], jobs: [], conflicts: [], unchangedCount: 0, adoptedCount: 0)
    /// Deletion jobs, written only once the guards have passed: a refused plan leaves no
    /// deletion in the journal.
    package var heldDeletions: [FileRecord] = []
    package var remoteDeletions = 0
    package var localDeletions = 0
    package var remoteReplacements = 0
    package var localReplacements = 0
    /// Files on the remote side (listed, or known from the journal).
    package var remoteCount = 0
    package var replacementSample = ReplacementSample(capacity: HoldPolicy.sampleSize)
    /// Two-way sync: files gone locally that may have been renamed (few, even when the plan
    /// is large); their new names are looked for once every part is written.
    package var vanished: [FileRecord] = []

    private let mode: SyncMode
    private let keeping: Keeping

    package init(mode: SyncMode, keeping: Keeping) {
        self.mode = mode
        self.keeping = keeping
    }

    /// Adds a planned part; returns the rows to write now (every change but the deletions)
    /// and the paths to forget.
    package mutating func add(_ part: Plan) -> (written: [FileRecord], forgotten: [String]) {
        if keeping != .counts { plan.jobs += part.jobs }
        for job in part.jobs {
            switch job.action {
            case .deleteRemote: remoteDeletions += 1
            case .deleteLocal: localDeletions += 1
            default: break
            }
            let replaces = Planner.replaces(job)
            if replaces.remote, let remote = job.remote {
                remoteReplacements += 1
                replacementSample.offer(job.path, remote: remote, remoteName: job.remoteSpelling)
            }
            if replaces.local { localReplacements += 1 }
        }
        if mode == .sync {
            let resumed = Set(part.resumedDisplacements)
            vanished += part.jobs.filter { RenameDetection.mayBeRenamedAway($0) && !resumed.contains($0.path) }
        }
        plan.resumedDisplacements += part.resumedDisplacements
        plan.conflicts += part.conflicts
        plan.unchangedCount += part.unchangedCount
        plan.adoptedCount += part.adoptedCount
        plan.localFileCount += part.localFileCount
        plan.abandonedDownloads += part.abandonedDownloads
        var written: [FileRecord] = []
        for record in part.changedRecords {
            if record.action?.isDeletion == true {
                heldDeletions.append(record)
            } else {
                written.append(record)
            }
        }
        if keeping == .everything {
            plan.changedRecords += written
            plan.forgottenPaths += part.forgottenPaths
        }
        return (written, part.forgottenPaths)
    }

    /// Rows the quick check settled without planning: unchanged on both sides.
    package mutating func addSettled(_ count: Int) {
        plan.unchangedCount += count
        plan.localFileCount += count
        plan.quickCheckedCount += count
        remoteCount += count
    }

    /// Renames found among the vanished files and the new ones: their MOVE jobs replace the
    /// deletions and the uploads, and are written with the deletions.
    package mutating func apply(_ renames: [RenameDetection.Rename]) {
        guard !renames.isEmpty else { return }
        plan.jobs = RenameDetection.applying(renames, to: plan.jobs)
        remoteDeletions -= renames.count
        let moves = RenameDetection.applying(renames, to: renames.map(\.from))
        let renamed = Set(moves.map(\.path))
        heldDeletions = heldDeletions.filter { !renamed.contains($0.path) } + moves
    }

    /// The deletion guard, then the replacement guard (`Planner.checkDeletions`,
    /// `Planner.checkReplacements`); the content hold, which reads files, comes between
    /// them and is the caller's.
    package func checkDeletions(options: PlanOptions) throws(PlanError) {
        try Planner.checkDeletions(remoteDeletions: remoteDeletions, localDeletions: localDeletions,
                                   remoteFiles: remoteCount, localFiles: plan.localFileCount, options: options)
    }

    package func checkReplacements(options: PlanOptions) throws(PlanError) {
        try Planner.checkReplacements(remote: remoteReplacements, local: localReplacements,
                                      remoteFiles: remoteCount, localFiles: plan.localFileCount, options: options)
    }
}
