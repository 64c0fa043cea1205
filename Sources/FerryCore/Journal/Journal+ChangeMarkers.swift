import FerryPlanning
import Foundation
import GRDB

/// The pair's change markers (`ChangeMarker`): the one it publishes, with the folders it
/// wrote into and has not announced yet, and what it last saw of the other writers'.
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
        try await read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT marker, pending FROM ownChangeMarker WHERE pairId = ?",
                                             arguments: [pairId]) else {
                return OwnChangeMarker(marker: nil, pending: nil, hasPending: false)
            }
            let marker = (row["marker"] as String?).flatMap { ChangeMarker.decode(Data($0.utf8)) }
            let pendingText: String? = row["pending"]
            let pending = pendingText.flatMap { text in
                text == "*" ? nil : (try? JSONDecoder().decode([String].self, from: Data(text.utf8))).map(Set.init)
            }
            return OwnChangeMarker(marker: marker, pending: pending, hasPending: pendingText != nil)
        }
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
        try await write { db in
            try db.execute(sql: """
                INSERT INTO ownChangeMarker (pairId, marker, pending) VALUES (?, NULL, ?)
                ON CONFLICT(pairId) DO UPDATE SET pending = excluded.pending
                """, arguments: [pairId, text])
        }
    }

    /// The marker about to be published, its folders still pending: its sequence number
    /// is not used again even if the run stops before it is written.
    public func reserveChangeMarker(pairId: Int64, _ marker: ChangeMarker) async throws(JournalError) {
        let text = String(decoding: marker.encoded(), as: UTF8.self)
        try await write { db in
            try db.execute(sql: """
                INSERT INTO ownChangeMarker (pairId, marker, pending) VALUES (?, ?, '[]')
                ON CONFLICT(pairId) DO UPDATE SET marker = excluded.marker
                """, arguments: [pairId, text])
        }
    }

    /// The marker as published; the pending folders it announced are no longer pending.
    public func recordPublishedChangeMarker(pairId: Int64, _ marker: ChangeMarker) async throws(JournalError) {
        let text = String(decoding: marker.encoded(), as: UTF8.self)
        try await write { db in
            try db.execute(sql: """
                INSERT INTO ownChangeMarker (pairId, marker, pending) VALUES (?, ?, NULL)
                ON CONFLICT(pairId) DO UPDATE SET marker = excluded.marker, pending = NULL
                """, arguments: [pairId, text])
        }
    }

    /// Forgets the pending folders without announcing them: no reader relies on markers.
    public func clearPendingChanges(pairId: Int64) async throws(JournalError) {
        try await write { db in
            try db.execute(sql: "UPDATE ownChangeMarker SET pending = NULL WHERE pairId = ?", arguments: [pairId])
        }
    }

    /// What this pair last saw of the other writers' markers, by writer.
    public func seenChangeMarkers(pairId: Int64) async throws(JournalError) -> [String: ChangeMarkerReading.Seen] {
        try await read { db in
            var seen: [String: ChangeMarkerReading.Seen] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT writer, seq, device, changedAt FROM seenChangeMarker WHERE pairId = ?",
                                        arguments: [pairId]) {
                seen[row["writer"]] = ChangeMarkerReading.Seen(seq: row["seq"], device: row["device"], changedAt: row["changedAt"])
            }
            return seen
        }
    }

    /// Replaces what this pair saw of the other writers, by a run that finished.
    public func recordSeenChangeMarkers(pairId: Int64, _ seen: [String: ChangeMarkerReading.Seen]) async throws(JournalError) {
        try await write { db in
            try db.execute(sql: "DELETE FROM seenChangeMarker WHERE pairId = ?", arguments: [pairId])
            for (writer, marker) in seen {
                try db.execute(sql: "INSERT INTO seenChangeMarker (pairId, writer, seq, device, changedAt) VALUES (?, ?, ?, ?, ?)",
                               arguments: [pairId, writer, marker.seq, marker.device, marker.changedAt])
            }
        }
    }
}

extension Journal {
    /// The folders the pair's pending jobs write into on the remote (a move's or a conflict
    /// copy's target too); nil when there are more than a marker names. Read with a
    /// cursor: a first push of a million files holds folders, not paths.
    public func pendingJobFolders(pairId: Int64) async throws(JournalError) -> Set<String>? {
        // A download writes nothing there; a deletion's or a replaced version's
        // `moveTarget` is a trash name, not a folder of the tree.
        let writing: [FileAction] = [.upload, .deleteRemote, .moveRemote, .keepBothLocalLoses, .keepBothRemoteLoses, .compareContent]
        let moving: Set<FileAction> = [.moveRemote, .keepBothLocalLoses, .keepBothRemoteLoses]
        return try await read { db in
            var folders: Set<String> = []
            let marks = writing.map { _ in "?" }.joined(separator: ", ")
            let rows = try Row.fetchCursor(db, sql: "SELECT path, action, moveTarget FROM file WHERE pairId = ? AND action IN (\(marks))",
                                           arguments: StatementArguments([pairId] + writing.map(\.rawValue)))
            while let row = try rows.next() {
                folders.insert(ChangeMarker.folder(of: row["path"]))
                let action: FileAction? = row["action"]
                if let action, moving.contains(action), let target: String = row["moveTarget"] {
                    folders.insert(ChangeMarker.folder(of: target))
                }
                if folders.count > ChangeMarker.maxFolders { return nil }
            }
            return folders
        }
    }

    /// The folders of the files synced at or after `time` (nil past a marker's limit):
    /// where a run's re-decided files may have written, when it had to decide again.
    public func syncedFolders(pairId: Int64, since time: Double) async throws(JournalError) -> Set<String>? {
        try await read { db in
            var folders: Set<String> = []
            let rows = try String.fetchCursor(db, sql: "SELECT path FROM file WHERE pairId = ? AND syncedAt >= ?",
                                              arguments: [pairId, time])
            while let path = try rows.next() {
                folders.insert(ChangeMarker.folder(of: path))
                if folders.count > ChangeMarker.maxFolders { return nil }
            }
            return folders
        }
    }
}
