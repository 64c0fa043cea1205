import FerryPlanning
import FerryPluginAPI

/// Folds a scan into the journal's records: new files get a row, changed files an updated
/// local view, vanished files lose theirs. Unchanged files are left untouched, so an
/// unchanged tree produces no writes at all.
public enum ScanReconciler {
    /// The scan holds each path once (a walk gives each file once).
    /// `unsettled` are paths left out of the scan because they are still being written:
    /// their rows keep the local version they had, so a file being rewritten never looks
    /// deleted (which a mirror push or a two-way sync would carry to the remote).
    /// `queuesCurrent`: the rows were classified by `classifier`'s rules (the pair's
    /// `queueRules`), so only new and changed files are classified again. Matching every
    /// path against the queue globs was a twentieth of a no-op push's CPU.
    /// `requeued`: the rows the planner writes even when it decides nothing else for them:
    /// those whose queue alone changed (new rules), and those whose local version changed
    /// or vanished. A row waiting with the job of an interrupted run is planned again as
    /// it was when the new version leads to the same job (a download the remote wins);
    /// unwritten, the job would run with the version it was first planned with, and fail
    /// as "the local file changed" on every run.
    public static func reconcile(
        records: [String: FileRecord], scan: ScanResult, pairId: Int64,
        classifier: QueueClassifier, now: Double, unsettled: Set<String> = [], queuesCurrent: Bool = false
    ) -> (merged: [String: FileRecord], requeued: Set<String>) {
        var merged = records
        var requeued: Set<String> = []
        // Rows with a local version that the scan found again. When that is all of them
        // (the usual run), nothing vanished, and the scan's paths need no set of their own.
        var foundAgain = 0
        for entry in scan.entries {
            let path = entry.path.string
            if var record = merged[path] {
                if record.local != nil { foundAgain += 1 }
                if queuesCurrent && record.local == entry.version { continue }
                let queue = classifier.queue(forPath: path, size: entry.version.size)
                if record.local == entry.version && record.queue == queue { continue }
                if record.local != entry.version { record.localHash = nil }
                requeued.insert(path)
                record.local = entry.version
                record.queue = queue
                record.updatedAt = now
                merged[path] = record
            } else {
                let queue = classifier.queue(forPath: path, size: entry.version.size)
                var record = FileRecord(pairId: pairId, path: path, queue: queue, status: .localOnly, updatedAt: now)
                record.local = entry.version
                merged[path] = record
            }
        }
        guard foundAgain < records.values.count(where: { $0.local != nil }) else { return (merged, requeued) }
        let seen = Set(scan.entries.lazy.map(\.path.string))
        for (path, record) in records where record.local != nil && !seen.contains(path) && !unsettled.contains(path) {
            var updated = record
            updated.local = nil
            updated.updatedAt = now
            merged[path] = updated
            requeued.insert(path)
        }
        return (merged, requeued)
    }
}
