import FerryConfig
import FerryPlanning

/// Decides, after planning, which jobs go through bundles: a push packs eligible new cold
/// files into bundles and retires bundle members whose files are sent plain or deleted; a
/// pull restores bundled-only files from their bundles. Everything else stays with the
/// transfer engine, in the order the planner ranked it.
///
/// Pure logic over values: no I/O, the time is passed in.
public enum BundlePlanner {
    public struct Partition: Sendable {
        /// Jobs for the transfer engine.
        public var engineJobs: [FileRecord] = []
        /// New bundles to build and upload (push), each a list of upload jobs in path order.
        public var newBundles: [[FileRecord]] = []
        /// Upload jobs of files that are in a bundle now: once sent plain, their member is stale.
        public var leavingBundles: [FileRecord] = []
        /// Deletions of files whose only remote copy is in a bundle (push with --delete):
        /// done by dropping the member from its manifest.
        public var bundledDeletions: [FileRecord] = []
        /// Downloads of bundled-only files (pull), by bundle name.
        public var restores: [String: [FileRecord]] = [:]
    }

    /// Bytes a member is counted for beyond its data (a tar header): `bundle_size` is the
    /// files' bytes before compression, and headers of tiny files must not dominate it.
    static let memberOverhead: Int64 = 512

    /// Whether `partition` can take any job away from the transfer engine: only with an
    /// archive rule, or with bundles on the remote. Otherwise a run's jobs need not be
    /// held in memory to be partitioned.
    public static func mayTakeJobs(rule: ArchiveRule?, catalog: BundleCatalog) -> Bool {
        rule != nil || !catalog.members.isEmpty
    }

    public static func partition(
        jobs: [FileRecord], catalog: BundleCatalog, mode: SyncMode, rule: ArchiveRule?, matcher: GlobSet?, now: Double
    ) -> Partition {
        var partition = Partition()
        var candidates: [FileRecord] = []
        let coldBefore = rule.map { Int64((now - $0.olderThan.inSeconds) * 1e9) }
        for job in jobs {
            let member = catalog.members[job.path]
            // A two-way sync sends like a push and fetches like a pull.
            let sends = mode != .pull, fetches = mode != .push
            switch job.action {
            case .deleteRemote? where sends && member != nil && catalog.bundledOnlyPaths.contains(job.path):
                partition.bundledDeletions.append(job)
            case .upload? where sends && member != nil:
                partition.leavingBundles.append(job)
                partition.engineJobs.append(job)
            case .upload? where sends:
                if let rule, let coldBefore, let local = job.local, job.remote == nil, job.status != .uploading,
                   local.size <= rule.maxFileSize, local.modifiedNanos <= coldBefore,
                   matcher?.matches(job.path) ?? true {
                    candidates.append(job)
                } else {
                    partition.engineJobs.append(job)
                }
            case .download? where fetches && member != nil && catalog.bundledOnlyPaths.contains(job.path):
                partition.restores[member!.bundle, default: []].append(job)
            default:
                partition.engineJobs.append(job)
            }
        }
        guard let rule, !candidates.isEmpty else { return partition }

        candidates.sort { $0.path.precedesInUTF8Order($1.path) }
        var groups: [[FileRecord]] = []
        var current: [FileRecord] = []
        var bytes: Int64 = 0
        var manifestBytes: Int64 = 0
        for job in candidates {
            let cost = (job.localSize ?? 0) + memberOverhead
            // Many tiny files would make a manifest too large to be read back.
            let manifestCost = BundleManifest.bytes(forMemberPath: job.path)
            if !current.isEmpty && (bytes + cost > rule.bundleSize || manifestBytes + manifestCost > BundleManifest.plannedMaxSize) {
                groups.append(current)
                current = []
                bytes = 0
                manifestBytes = 0
            }
            current.append(job)
            bytes += cost
            manifestBytes += manifestCost
        }
        if !current.isEmpty { groups.append(current) }
        var plain: [FileRecord] = []
        for group in groups {
            if group.count >= rule.minFiles {
                partition.newBundles.append(group)
            } else {
                plain += group
            }
        }
        if !plain.isEmpty {
            // Back with the engine, after everything else (they are the archives' share).
            partition.engineJobs += plain
        }
        return partition
    }
}
