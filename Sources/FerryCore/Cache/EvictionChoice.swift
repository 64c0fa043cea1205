import FerryConfig
import FerryPlanning
import FerryPluginAPI

/// Which files a folder over its cache budget removes locally: pure logic over values.
///
/// Only files that are in sync with a copy on the remote are candidates (the caller says
/// which); the rest count toward what the folder holds but are never chosen. Candidates go
/// least recent first (by the budget's order, a file fetched on demand counting from its
/// fetch), until the folder is within its budget or no candidate is left.
public enum EvictionChoice {
    public struct Candidate: Sendable, Equatable {
        public var path: String
        public var size: Int64
        /// Nanoseconds since 1970: the later of the file's time by the budget's order and
        /// its last fetch on demand (`recency(…)`).
        public var recency: Int64

        public init(path: String, size: Int64, recency: Int64) {
            self.path = path
            self.size = size
            self.recency = recency
        }
    }

    /// What the folder holds and what is chosen.
    public struct Outcome: Sendable, Equatable {
        public var evict: [Candidate]
        /// What the folder holds once those are gone.
        public var bytesLeft: Int64
        public var filesLeft: Int
        /// Still over the budget with no candidate left: the rest are not yet on the
        /// remote, in a kept queue, or pending.
        public var stillOver: Bool
    }

    /// `heldBytes` and `heldFiles` are every local file of the folder, candidates included.
    public static func choose(candidates: [Candidate], heldBytes: Int64, heldFiles: Int, limit: LocalLimit) -> Outcome {
        var bytes = heldBytes
        var files = heldFiles
        var chosen: [Candidate] = []
        guard limit.isExceeded(bytes: bytes, files: files) else {
            return Outcome(evict: [], bytesLeft: bytes, filesLeft: files, stillOver: false)
        }
        let ordered = candidates.sorted { lhs, rhs in
            lhs.recency != rhs.recency ? lhs.recency < rhs.recency : lhs.path.precedesInUTF8Order(rhs.path)
        }
        for candidate in ordered {
            guard limit.isExceeded(bytes: bytes, files: files) else { break }
            chosen.append(candidate)
            bytes -= candidate.size
            files -= 1
        }
        return Outcome(evict: chosen, bytesLeft: bytes, filesLeft: files, stillOver: limit.isExceeded(bytes: bytes, files: files))
    }

    /// A file's place in the order: its modification time (`oldest`) or its access time
    /// where recorded (`least-recently-used`, else the modification time), and never
    /// earlier than its last fetch on demand, so a file just asked for goes last.
    public static func recency(order: LocalLimit.EvictionOrder, modifiedNanos: Int64, accessedNanos: Int64?,
                               fetchedAt: Double?) -> Int64 {
        let own: Int64
        switch order {
        case .oldest: own = modifiedNanos
        case .leastRecentlyUsed: own = max(modifiedNanos, accessedNanos ?? modifiedNanos)
        }
        guard let fetchedAt else { return own }
        return max(own, Int64(fetchedAt * 1e9))
    }

    /// What a look at a candidate just before its removal says of it.
    public enum FileCheck: Sendable, Equatable {
        /// The version known in sync: the remote holds its bytes, and it may go.
        case asSynced
        /// Another size or modification time: a change the next scan finds. It stays.
        case changed
        /// The synced size and modification time, but another status-change time or inode:
        /// perhaps edited in place with its time set back (`touch -r`), perhaps only
        /// touched otherwise (`chmod`, a copy put back). It stays until the bytes are compared.
        case mayBeEdited
    }

    /// Compares the file as it is now with the version last known in sync (`synced`, and
    /// its status-change time `syncedChangedNanos` when that was read). Without a recorded
    /// status-change time (rows written before it was kept) the inode is the only check
    /// beyond size and time.
    public static func check(_ current: FileMetadata, synced: LocalVersion, syncedChangedNanos: Int64?) -> FileCheck {
        guard current.kind == .file, current.size == synced.size, current.modifiedNanos == synced.modifiedNanos else {
            return .changed
        }
        if synced.inode != 0, current.inode != 0, Int64(bitPattern: current.inode) != synced.inode { return .mayBeEdited }
        if let syncedChangedNanos, current.changedNanos != syncedChangedNanos { return .mayBeEdited }
        return .asSynced
    }

    /// Whether a journal record may be evicted: in sync, present on both sides as the
    /// journal last saw them, and not in a kept queue.
    public static func isCandidate(_ record: FileRecord, limit: LocalLimit) -> Bool {
        record.status == .inSync && record.local != nil && record.remote != nil && record.syncedRemote != nil
            && !limit.keepQueues.contains(record.queue)
    }
}
