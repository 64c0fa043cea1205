import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

/// Upload jobs for files the journal has never seen, made without a scan or a listing so
/// that they can join a push that is already running. Only new files qualify: for them the
/// planner's answer does not depend on the remote (a new local file is uploaded whether
/// the remote lacks it or has a different one). Changed files wait for the next full plan,
/// which may find a conflict.
///
/// A file that `cutoff` finds fresh is not ready yet: it comes back in `fresh` with
/// its modification time, so that the caller can offer it again once it has been quiet
/// long enough. (Files found by scanning a new subfolder announced no event of their own:
/// only their modification time tells whether they are still being written.)
package struct NewFileJobs {
    package var jobs: [FileRecord] = []
    /// Files too fresh to send, with their modification time (seconds since 1970).
    package var fresh: [String: Double] = [:]
    /// Paths that are not new files (gone, not a regular file, or known to the journal as
    /// more than an unstarted upload): their answer needs a full plan.
    var others: [String] = []

    /// The jobs, written to the journal before they are handed out.
    package static func make(paths: Set<String>, pair: FolderPair, pairId: Int64, journal: Journal,
                     classifier: QueueClassifier, ignore: GlobSet, cutoff: SettleCutoff?,
                     at now: Double) async throws(JournalError) -> NewFileJobs {
        let result = try await find(paths: paths, pair: pair, pairId: pairId, journal: journal, classifier: classifier,
                                    ignore: ignore, cutoff: cutoff, at: now)
        try await result.save(in: journal)
        return result
    }

    /// On disk before the engine sees them, as for every planned job.
    func save(in journal: Journal) async throws(JournalError) {
        if !jobs.isEmpty { try await journal.applyPlan(jobs) }
    }

    /// What to do with a path the journal holds as a new file's upload that never started:
    /// a job made for a running push whose engine had ended when it came (`JobFeed.push`
    /// refused it), or planned by a run stopped before it got there.
    enum UnstartedJobs {
        /// Another job for it would be a second one: the running engine may hold it.
        case leave
        /// No engine runs (a run's own plan): it is still a new file's upload, whatever the
        /// remote holds under its name.
        case takeAgain
    }

    /// What `make` would write, written nowhere.
    static func find(paths: Set<String>, pair: FolderPair, pairId: Int64, journal: Journal,
                     classifier: QueueClassifier, ignore: GlobSet, cutoff: SettleCutoff?,
                     unstartedJobs: UnstartedJobs = .leave,
                     at now: Double) async throws(JournalError) -> NewFileJobs {
        var result = NewFileJobs()
        for path in paths.sorted() where !ignore.matches(path) {
            guard let meta = try? LocalFileSystem.metadata(LocalFileSystem.join(pair.localRoot, path)),
                  meta.kind == .file else {
                result.others.append(path)
                continue
            }
            if let cutoff, cutoff.isFresh(modifiedNanos: meta.modifiedNanos) {
                result.fresh[path] = Double(meta.modifiedNanos) / 1e9
                continue
            }
            let version = LocalVersion(size: meta.size, modifiedNanos: meta.modifiedNanos, inode: Int64(bitPattern: meta.inode))
            if let known = try await journal.record(pairId: pairId, path: path) {
                guard unstartedJobs == .takeAgain, known.isUnstartedNewUpload else {
                    result.others.append(path)
                    continue
                }
                var record = known
                record.local = version
                record.updatedAt = now
                result.jobs.append(record)
                continue
            }
            var record = FileRecord(pairId: pairId, path: path, queue: classifier.queue(forPath: path, size: meta.size),
                                    status: .needsUpload, updatedAt: now)
            record.local = version
            record.plan(.upload)
            result.jobs.append(record)
        }
        return result
    }
}
