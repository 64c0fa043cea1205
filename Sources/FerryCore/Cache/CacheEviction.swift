import FerryConfig
import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem

/// After a run of a pull or sync folder with a cache budget (`local_limit:`): while the
/// folder holds more than the budget, its least recent in-sync files are removed locally
/// and recorded `remoteOnly` (`EvictionChoice` decides which).
///
/// The journal is written before the file is removed: a crash between the two leaves a
/// `remoteOnly` row with the file still there, which the next scan finds unchanged and
/// records in sync again; the other order would leave an in-sync row with no file, which
/// a two-way sync would take for a local deletion and carry to the remote.
struct CacheEviction: Sendable {
    let limit: LocalLimit
    let journal: Journal
    let pairId: Int64
    /// The pair's local folder: files are read and removed relative to it, never through a
    /// symbolic link.
    let folder: AnchoredFolder
    let sink: any RunEventSink
    /// Files this run fetched on demand: never evicted by the run that fetched them.
    var keep: Set<String> = []

    struct Result: Sendable, Equatable {
        var files = 0
        var bytes: Int64 = 0
        var stillOver = false
    }

    static let pageSize = 2_000

    func run(now: Double) async throws(JournalError) -> Result {
        var heldBytes: Int64 = 0
        var heldFiles = 0
        var candidates: [EvictionChoice.Candidate] = []
        var after: String?
        while true {
            let page = try await journal.records(pairId: pairId, after: after, limit: Self.pageSize)
            for record in page {
                guard let local = record.local else { continue }
                heldBytes += local.size
                heldFiles += 1
                guard EvictionChoice.isCandidate(record, limit: limit), !keep.contains(record.path) else { continue }
                let accessed = limit.order == .leastRecentlyUsed ? (try? folder.accessedNanos(record.path)) ?? nil : nil
                candidates.append(EvictionChoice.Candidate(
                    path: record.path, size: local.size,
                    recency: EvictionChoice.recency(order: limit.order, modifiedNanos: local.modifiedNanos,
                                                    accessedNanos: accessed, fetchedAt: record.fetchedAt)))
            }
            guard page.count == Self.pageSize, let last = page.last else { break }
            after = last.path
        }
        let outcome = EvictionChoice.choose(candidates: candidates, heldBytes: heldBytes, heldFiles: heldFiles, limit: limit)
        var result = Result(stillOver: outcome.stillOver)
        for candidate in outcome.evict {
            if Task.isCancelled { break }
            if let bytes = try await evict(candidate.path, now: now) {
                result.files += 1
                result.bytes += bytes
            } else {
                result.stillOver = true
            }
        }
        return result
    }

    /// Evicts one file if it is still the in-sync version the journal knows; its size, or
    /// nil when it was left in place.
    func evict(_ path: String, now: Double) async throws(JournalError) -> Int64? {
        guard let record = try await journal.record(pairId: pairId, path: path),
              EvictionChoice.isCandidate(record, limit: limit), let version = record.local else { return nil }
        let limit = self.limit
        /// The row is still the one looked at: no run changed it meanwhile.
        @Sendable func unchanged(_ current: FileRecord) -> Bool {
            current.local == version && current.syncedLocal == record.syncedLocal && EvictionChoice.isCandidate(current, limit: limit)
        }
        // The file as it is now, against the version last known in sync: removing anything
        // else could remove the only copy of an edit.
        guard let metadata = try? folder.metadata(path) else { return nil }
        switch EvictionChoice.check(metadata, synced: record.syncedLocal ?? version,
                                    syncedChangedNanos: record.syncedLocalChangedNanos) {
        case .asSynced:
            break
        case .changed:
            // The next scan finds the change; until then it is not known to be on the remote.
            return nil
        case .mayBeEdited:
            let current = LocalVersion(size: metadata.size, modifiedNanos: metadata.modifiedNanos, inode: Int64(bitPattern: metadata.inode))
            try await journal.change(pairId: pairId, path: path) { record in
                guard unchanged(record) else { return false }
                record.suspectEditInPlace(current: current, at: now)
                return true
            }
            sink.emit(.skipped(path: path, reason: "not evicted: changed in place since the last sync (same size and "
                + "time, another status-change time or inode); the next run compares it with the remote copy"))
            return nil
        }
        let queue = record.queue
        let evicted = try await journal.change(pairId: pairId, path: path) { record in
            guard unchanged(record) else { return false }
            record.evictLocally(at: now)
            return true
        }
        guard evicted != nil else { return nil }
        do {
            try folder.removeFile(path)
        } catch {
            try await journal.change(pairId: pairId, path: path) { record in
                record.local = version
                record.confirmInSync()
                return true
            }
            sink.emit(.skipped(path: path, reason: "cannot evict: \(error.description)"))
            return nil
        }
        sink.emit(.evicted(path: path, queue: queue, bytes: version.size))
        return version.size
    }
}
