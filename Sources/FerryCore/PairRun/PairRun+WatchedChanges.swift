import FerryEngine
import FerryJournal
import FerryPlanning
import FerrySystem

extension PairRun {
    /// The plan of a daemon's run for what its watcher saw, made without walking the tree
    /// when every settled file is new to the journal (or an upload it holds that never
    /// began) and every file that went was never synced (an editor's temporary file, renamed
    /// away), in a push that may trust the journal's view of the remote (`remote_check`, no
    /// `--delete`): the new files' upload jobs, made as for files that join a running push
    /// (`NewFileJobs`: a new local file is uploaded whatever the remote holds under its
    /// name). At 1,000,000 files on one core the walk made a new photo wait 8 s more than
    /// the quiet period.
    /// Nil when the run must look at the whole tree: a settled path changed, gone or not a
    /// file, one still being written, a synced file gone, a remote check due, a first run,
    /// or anything but a push.
    func planWatchedChanges(opened: OpenJournal, rules: Rules) async throws(RunError) -> (RemoteSnapshot, Plan, Double)? {
        guard let changes = options.watchedChanges, !changes.settled.isEmpty || !changes.removed.isEmpty,
              pair.mode == .push, !options.dryRun, let journal = opened.journal,
              opened.pairRecord?.lastRunAt != nil else { return nil }
        let now = options.clock.wallTime()
        guard let snapshot = try await journalSnapshot(opened: opened, rules: rules, now: now) else { return nil }
        let found: NewFileJobs
        // Files gone before their upload began (a job made for a push that had ended): there
        // is nothing to send, and nothing on the remote to answer for.
        var goneBeforeUpload: [(pairId: Int64, path: String)] = []
        do {
            for path in changes.removed {
                guard let known = try await journal.record(pairId: opened.pairId, path: path) else { continue }
                guard known.isUnstartedNewUpload,
                      (try? LocalFileSystem.metadata(LocalFileSystem.join(pair.localRoot, path))) == nil else { return nil }
                goneBeforeUpload.append((opened.pairId, path))
            }
            // No engine runs for this pair while it plans: an unstarted upload the journal
            // holds is taken again, not left for a plan of the whole tree.
            found = try await NewFileJobs.find(paths: changes.settled, pair: pair, pairId: opened.pairId, journal: journal,
                                               classifier: rules.classifier, ignore: rules.ignore,
                                               cutoff: options.settleCutoff, unstartedJobs: .takeAgain, at: now)
        } catch {
            throw RunError(.journal, error.description, cause: .journal(error))
        }
        guard found.others.isEmpty, found.fresh.isEmpty else { return nil }
        // As after a whole plan: nothing is transferred from a damaged journal.
        if let failure = await opened.check?.failure() { throw failure }
        do {
            try await found.save(in: journal)
            if !goneBeforeUpload.isEmpty { try await journal.forget(goneBeforeUpload) }
        } catch {
            throw RunError(.journal, error.description, cause: .journal(error))
        }
        return (snapshot, Plan(changedRecords: [], forgottenPaths: [], jobs: [], conflicts: [], unchangedCount: 0,
                               adoptedCount: 0), now)
    }
}
