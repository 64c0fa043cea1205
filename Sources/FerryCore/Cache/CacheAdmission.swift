import FerryConfig
import FerryEngine
import FerryJournal
import FerryPluginAPI
import FerrySystem

/// Which of a run's new downloads a folder with a cache budget (`local_limit:`) fetches:
/// pure logic over values.
///
/// Evicting after the run would need the whole library on disk first (a first pull under
/// a 20 GiB budget fetched 170 GiB, then removed most of it). Before the downloads start,
/// the files the folder holds that could go (`EvictionChoice.isCandidate`) and the new
/// files the run would fetch are taken newest first (by the budget's order, remote time for
/// a new file) while they fit; a file that does not fit is passed over and smaller older
/// ones may still fit. Held files not taken are evicted before the downloads, new files
/// not taken stay `remoteOnly` (fetched on demand with `ferry pull FOLDER PATH`). What must
/// be local anyway is counted first: files that cannot be evicted, updates of local files,
/// files of kept queues and files asked for on demand.
public enum CacheAdmission {
    public struct Outcome: Sendable, Equatable {
        /// New files left on the remote.
        public var leaveRemote: [String] = []
        /// Held files evicted before the downloads, to make room for newer ones.
        public var evictFirst: [String] = []
    }

    /// `fixedBytes`/`fixedFiles`: what must be local whatever is chosen. `held`: files the
    /// folder holds that may be evicted; `incoming`: new files the run would fetch (their
    /// remote size and time as `Candidate`).
    public static func choose(fixedBytes: Int64, fixedFiles: Int, held: [EvictionChoice.Candidate],
                              incoming: [EvictionChoice.Candidate], limit: LocalLimit) -> Outcome {
        let isNew = Set(incoming.map(\.path))
        let newestFirst = (held + incoming).sorted { lhs, rhs in
            lhs.recency != rhs.recency ? lhs.recency > rhs.recency : lhs.path.precedesInUTF8Order(rhs.path)
        }
        var bytes = fixedBytes
        var files = fixedFiles
        var outcome = Outcome()
        for candidate in newestFirst {
            if !limit.isExceeded(bytes: bytes + candidate.size, files: files + 1) {
                bytes += candidate.size
                files += 1
            } else if isNew.contains(candidate.path) {
                outcome.leaveRemote.append(candidate.path)
            } else {
                outcome.evictFirst.append(candidate.path)
            }
        }
        return outcome
    }
}

/// Runs `CacheAdmission` on a pair's journal before the downloads of a pull or sync
/// folder with a cache budget.
struct CacheAdmissionStep: Sendable {
    let limit: LocalLimit
    let journal: Journal
    let pairId: Int64
    let folder: AnchoredFolder
    let sink: any RunEventSink
    /// The folder's name, for the command that fetches a file left on the remote.
    let folderName: String

    struct Result: Sendable {
        /// Files asked for on demand that this run fetches: the budget's eviction after the
        /// run leaves them alone.
        var onDemand: Set<String> = []
        /// New files left on the remote, not fetched.
        var leftRemote: Set<String> = []
        var evicted = CacheEviction.Result()
    }

    func run(now: Double) async throws(JournalError) -> Result {
        var result = Result()
        var fixedBytes: Int64 = 0
        var fixedFiles = 0
        var held: [EvictionChoice.Candidate] = []
        var incoming: [EvictionChoice.Candidate] = []
        var after: String?
        while true {
            let page = try await journal.records(pairId: pairId, after: after, limit: CacheEviction.pageSize)
            for record in page {
                let downloads = record.status.isPending && record.action == .download
                if record.isFetchOnDemand { result.onDemand.insert(record.path) }
                if downloads, record.local == nil, let remote = record.remote, !record.isFetchOnDemand,
                   !limit.keepQueues.contains(record.queue) {
                    incoming.append(EvictionChoice.Candidate(path: record.path, size: remote.size,
                                                             recency: remote.modifiedNanos ?? 0))
                } else if let local = record.local, EvictionChoice.isCandidate(record, limit: limit) {
                    let accessed = limit.order == .leastRecentlyUsed ? (try? folder.accessedNanos(record.path)) ?? nil : nil
                    held.append(EvictionChoice.Candidate(
                        path: record.path, size: local.size,
                        recency: EvictionChoice.recency(order: limit.order, modifiedNanos: local.modifiedNanos,
                                                        accessedNanos: accessed, fetchedAt: record.fetchedAt)))
                } else if record.local != nil || downloads {
                    // Local whatever is chosen: pending, kept, an update, or asked for.
                    fixedBytes += max(record.local?.size ?? 0, downloads ? record.remote?.size ?? 0 : 0)
                    fixedFiles += 1
                }
            }
            guard page.count == CacheEviction.pageSize, let last = page.last else { break }
            after = last.path
        }
        // Only a run that would fetch new files decides here; otherwise the eviction after
        // the run does what it always did.
        guard !incoming.isEmpty else { return result }
        let outcome = CacheAdmission.choose(fixedBytes: fixedBytes, fixedFiles: fixedFiles, held: held,
                                            incoming: incoming, limit: limit)
        let eviction = CacheEviction(limit: limit, journal: journal, pairId: pairId, folder: folder, sink: sink)
        for path in outcome.evictFirst {
            if let bytes = try await eviction.evict(path, now: now) {
                result.evicted.files += 1
                result.evicted.bytes += bytes
            }
        }
        for path in outcome.leaveRemote {
            let left = try await journal.change(pairId: pairId, path: path) { record in
                guard record.local == nil, record.action == .download else { return false }
                record.keepRemoteOnly()
                record.updatedAt = now
                return true
            }
            guard left != nil else { continue }
            result.leftRemote.insert(path)
            sink.emit(.skipped(path: path, reason: "left on the remote: local_limit is full with newer files "
                + "(ferry pull \(folderName) \(path) fetches it)"))
        }
        return result
    }
}
