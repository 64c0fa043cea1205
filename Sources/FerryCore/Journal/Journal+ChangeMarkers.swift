import FerryJournal
import FerryPlanning
import Foundation

/// The pair's change markers (`ChangeMarker`) in the journal: the one it publishes, with
/// the folders it wrote into and has not announced yet, and what it last saw of the other
/// writers'. The journal keeps texts and numbers (FerryJournal's `Journal+ChangeMarkers`);
/// this reads and writes them as markers.
extension Journal {
    /// This pair's last published marker, and the folders written into since (nil: none
    /// pending; a nil element: too many to name).
    public struct OwnChangeMarker: Sendable, Equatable {
        public var marker: ChangeMarker?
        /// Folders written into and not yet announced; `nil` inside means "everything".
        public var pending: Set<String>?
        public var hasPending: Bool

        public init(marker: ChangeMarker?, pending: Set<String>?, hasPending: Bool) {
            self.marker = marker
            self.pending = pending
            self.hasPending = hasPending
        }
    }

    public func ownChangeMarker(pairId: Int64) async throws(JournalError) -> OwnChangeMarker {
        guard let row = try await ownChangeMarkerRow(pairId: pairId) else {
            return OwnChangeMarker(marker: nil, pending: nil, hasPending: false)
        }
        let marker = row.marker.flatMap { ChangeMarker.decode(Data($0.utf8)) }
        let pending = row.pending.flatMap { text in
            text == "*" ? nil : (try? JSONDecoder().decode([String].self, from: Data(text.utf8))).map(Set.init)
        }
        return OwnChangeMarker(marker: marker, pending: pending, hasPending: row.pending != nil)
    }

    /// Adds folders this pair is about to write into (nil: everything), before it writes:
    /// a run that stops before it announces them announces them next time.
    public func addPendingChanges(pairId: Int64, folders: Set<String>?) async throws(JournalError) {
        let current = try await ownChangeMarker(pairId: pairId)
        var merged: Set<String>? = current.hasPending ? current.pending : []
        if let folders, let known = merged {
            merged = known.union(folders)
        } else {
            merged = nil
        }
        if let known = merged, known.count > ChangeMarker.maxFolders { merged = nil }
        let text = merged.map { folders in
            String(decoding: (try? JSONEncoder().encode(folders.sorted())) ?? Data("[]".utf8), as: UTF8.self)
        } ?? "*"
        try await setPendingChanges(pairId: pairId, pending: text)
    }

    /// The marker about to be published, its folders still pending: its sequence number
    /// is not used again even if the run stops before it is written.
    public func reserveChangeMarker(pairId: Int64, _ marker: ChangeMarker) async throws(JournalError) {
        try await reserveChangeMarker(pairId: pairId, text: String(decoding: marker.encoded(), as: UTF8.self))
    }

    /// The marker as published; the pending folders it announced are no longer pending.
    public func recordPublishedChangeMarker(pairId: Int64, _ marker: ChangeMarker) async throws(JournalError) {
        try await recordPublishedChangeMarker(pairId: pairId, text: String(decoding: marker.encoded(), as: UTF8.self))
    }

    /// What this pair last saw of the other writers' markers, by writer.
    public func seenChangeMarkers(pairId: Int64) async throws(JournalError) -> [String: ChangeMarkerReading.Seen] {
        var seen: [String: ChangeMarkerReading.Seen] = [:]
        for row in try await seenChangeMarkerRows(pairId: pairId) {
            seen[row.writer] = ChangeMarkerReading.Seen(seq: row.seq, device: row.device, changedAt: row.changedAt)
        }
        return seen
    }

    /// Replaces what this pair saw of the other writers, by a run that finished.
    public func recordSeenChangeMarkers(pairId: Int64, _ seen: [String: ChangeMarkerReading.Seen]) async throws(JournalError) {
        try await recordSeenChangeMarkers(pairId: pairId, rows: seen.map { writer, marker in
            SeenChangeMarkerRow(writer: writer, seq: marker.seq, device: marker.device, changedAt: marker.changedAt)
        })
    }

    /// The folders the pair's pending jobs write into on the remote (a move's or a conflict
    /// copy's target too); nil when there are more than a marker names.
    public func pendingJobFolders(pairId: Int64) async throws(JournalError) -> Set<String>? {
        try await pendingJobFolders(pairId: pairId, limit: ChangeMarker.maxFolders, folder: ChangeMarker.folder(of:))
    }

    /// The folders of the files synced at or after `time` (nil past a marker's limit):
    /// where a run's re-decided files may have written, when it had to decide again.
    public func syncedFolders(pairId: Int64, since time: Double) async throws(JournalError) -> Set<String>? {
        try await syncedFolders(pairId: pairId, since: time, limit: ChangeMarker.maxFolders, folder: ChangeMarker.folder(of:))
    }
}
