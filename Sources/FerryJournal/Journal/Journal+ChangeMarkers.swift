import FerryPlanning
import GRDB

/// The pair's change markers as the journal keeps them (tables `ownChangeMarker` and
/// `seenChangeMarker`): the marker it publishes, as the text published, with the folders it
/// wrote into and has not announced yet, and what it last saw of the other writers'.
/// What a marker is, and how its text reads, is FerryCore's (`ChangeMarker`,
/// `Journal+ChangeMarkers.swift` there): the journal keeps the texts and numbers.
extension Journal {
    /// This pair's row of `ownChangeMarker`.
    package struct OwnChangeMarkerRow: Sendable, Equatable {
        /// The marker last reserved or published, as its JSON text.
        package var marker: String?
        /// The folders written into and not yet announced: a JSON list, `*` for
        /// everything, nil when none is pending.
        package var pending: String?
    }

    /// What this pair last saw of one other writer's marker.
    package struct SeenChangeMarkerRow: Sendable, Equatable {
        package var writer: String
        package var seq: Int
        package var device: String
        package var changedAt: Double

        package init(writer: String, seq: Int, device: String, changedAt: Double) {
            self.writer = writer
            self.seq = seq
            self.device = device
            self.changedAt = changedAt
        }
    }

    /// Nil when the pair never wrote a marker nor noted a pending folder.
    package func ownChangeMarkerRow(pairId: Int64) async throws(JournalError) -> OwnChangeMarkerRow? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT marker, pending FROM ownChangeMarker WHERE pairId = ?", arguments: [pairId])
                .map { OwnChangeMarkerRow(marker: $0["marker"], pending: $0["pending"]) }
        }
    }

    /// Replaces the pending folders (`pending` as in `OwnChangeMarkerRow`), keeping the marker.
    package func setPendingChanges(pairId: Int64, pending text: String) async throws(JournalError) {
        try await write { db in
            try db.execute(sql: """
                INSERT INTO ownChangeMarker (pairId, marker, pending) VALUES (?, NULL, ?)
                ON CONFLICT(pairId) DO UPDATE SET pending = excluded.pending
                """, arguments: [pairId, text])
        }
    }

    /// The marker about to be published (its text), its folders still pending.
    package func reserveChangeMarker(pairId: Int64, text: String) async throws(JournalError) {
        try await write { db in
            try db.execute(sql: """
                INSERT INTO ownChangeMarker (pairId, marker, pending) VALUES (?, ?, '[]')
                ON CONFLICT(pairId) DO UPDATE SET marker = excluded.marker
                """, arguments: [pairId, text])
        }
    }

    /// The marker as published (its text); nothing is pending any more.
    package func recordPublishedChangeMarker(pairId: Int64, text: String) async throws(JournalError) {
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

    package func seenChangeMarkerRows(pairId: Int64) async throws(JournalError) -> [SeenChangeMarkerRow] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT writer, seq, device, changedAt FROM seenChangeMarker WHERE pairId = ?",
                             arguments: [pairId]).map {
                SeenChangeMarkerRow(writer: $0["writer"], seq: $0["seq"], device: $0["device"], changedAt: $0["changedAt"])
            }
        }
    }

    /// Replaces what this pair saw of the other writers, by a run that finished.
    package func recordSeenChangeMarkers(pairId: Int64, rows seen: [SeenChangeMarkerRow]) async throws(JournalError) {
        try await write { db in
            try db.execute(sql: "DELETE FROM seenChangeMarker WHERE pairId = ?", arguments: [pairId])
            for marker in seen {
                try db.execute(sql: "INSERT INTO seenChangeMarker (pairId, writer, seq, device, changedAt) VALUES (?, ?, ?, ?, ?)",
                               arguments: [pairId, marker.writer, marker.seq, marker.device, marker.changedAt])
            }
        }
    }
}

extension Journal {
    /// The folders the pair's pending jobs write into on the remote (a move's or a conflict
    /// copy's target too), as `folder` names the folder of a path; nil when there are more
    /// than `limit`. Read with a cursor: a first push of a million files holds folders, not
    /// paths.
    package func pendingJobFolders(pairId: Int64, limit: Int,
                                   folder: @escaping @Sendable (String) -> String) async throws(JournalError) -> Set<String>? {
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
                folders.insert(folder(row["path"]))
                let action: FileAction? = row["action"]
                if let action, moving.contains(action), let target: String = row["moveTarget"] {
                    folders.insert(folder(target))
                }
                if folders.count > limit { return nil }
            }
            return folders
        }
    }

    /// The folders (as `folder` names them) of the files synced at or after `time`; nil past
    /// `limit`: where a run's re-decided files may have written, when it had to decide again.
    package func syncedFolders(pairId: Int64, since time: Double, limit: Int,
                               folder: @escaping @Sendable (String) -> String) async throws(JournalError) -> Set<String>? {
        try await read { db in
            var folders: Set<String> = []
            let rows = try String.fetchCursor(db, sql: "SELECT path FROM file WHERE pairId = ? AND syncedAt >= ?",
                                              arguments: [pairId, time])
            while let path = try rows.next() {
                folders.insert(folder(path))
                if folders.count > limit { return nil }
            }
            return folders
        }
    }
}
