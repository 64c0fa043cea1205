/// Finds local renames in a two-way sync's plan, so that the remote copy is renamed with
/// one MOVE instead of being uploaded again under the new name and deleted under the old.
///
/// A rename is a file that vanished locally (its remote copy unchanged: the plan deletes
/// it remotely) and a new local file, not on the remote, with the vanished file's size,
/// modification time and inode. The inode makes it the same file on disk: a rename keeps
/// it, and no content hash is needed (hashing the new file would cost a read, and the old
/// one is no longer there to read). A match must be unique on both ends; anything
/// ambiguous is left to upload and delete.
public enum RenameDetection {
    public struct Rename: Sendable, Equatable {
        /// The vanished path's record, whose job becomes the MOVE.
        public var from: FileRecord
        public var to: String
    }

    /// What identifies a file on disk: size, modification time, inode.
    public struct Key: Hashable, Sendable {
        var size: Int64
        var modifiedNanos: Int64
        var inode: Int64
    }

    /// The identity of a file that vanished locally and is about to be deleted remotely;
    /// nil for any other job.
    public static func key(vanished job: FileRecord) -> Key? {
        guard job.action == .deleteRemote, job.local == nil, let base = job.syncedLocal, base.inode != 0 else { return nil }
        return Key(size: base.size, modifiedNanos: base.modifiedNanos, inode: base.inode)
    }

    /// The identity of a new local file about to be uploaded; nil for any other job.
    public static func key(appeared job: FileRecord) -> Key? {
        guard job.action == .upload, job.remote == nil, job.syncedLocal == nil, let local = job.local, local.inode != 0 else {
            return nil
        }
        return Key(size: local.size, modifiedNanos: local.modifiedNanos, inode: local.inode)
    }

    public static func mayBeRenamedAway(_ job: FileRecord) -> Bool { key(vanished: job) != nil }

    /// `notRenamed`: deletions that are no rename's source whatever matches them, the jobs
    /// resumed after a crash whose remote copy may already be in the trash
    /// (`Plan.resumedDisplacements`).
    public static func renames(in jobs: [FileRecord], notRenamed: Set<String> = []) -> [Rename] {
        var vanished: [Key: [FileRecord]] = [:]
        var appeared: [Key: [String]] = [:]
        for job in jobs {
            if let key = key(vanished: job) {
                if notRenamed.contains(job.path) { continue }
                vanished[key, default: []].append(job)
            } else if let key = key(appeared: job) {
                appeared[key, default: []].append(job.path)
            }
        }
        var found: [Rename] = []
        for (key, sources) in vanished {
            guard sources.count == 1, let targets = appeared[key], targets.count == 1 else { continue }
            found.append(Rename(from: sources[0], to: targets[0]))
        }
        return found.sorted { $0.to.precedesInUTF8Order($1.to) }
    }

    /// The jobs with each rename's deletion turned into a `moveRemote` and its upload dropped.
    public static func applying(_ renames: [Rename], to jobs: [FileRecord]) -> [FileRecord] {
        guard !renames.isEmpty else { return jobs }
        var moves: [String: String] = [:]
        var targets: Set<String> = []
        for rename in renames {
            moves[rename.from.path] = rename.to
            targets.insert(rename.to)
        }
        return jobs.compactMap { job in
            if targets.contains(job.path) && job.action == .upload { return nil }
            guard let target = moves[job.path] else { return job }
            var moved = job
            moved.plan(.moveRemote)
            moved.moveTarget = target
            return moved
        }
    }
}
