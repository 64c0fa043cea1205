import FerryPlanning
import GRDB

/// The journal's record of archive bundles: which bundles a pair's remote holds and which
/// file is in which (tables `archiveBundle` and `archiveMember`).
extension Journal {
    public func bundles(pairId: Int64) async throws(JournalError) -> [BundleRecord] {
        try await read { db in
            try BundleRecord.filter(Column("pairId") == pairId).order(Column("name")).fetchAll(db)
        }
    }

    /// Members of a pair's bundles, stale ones included, by bundle then path.
    public func bundleMembers(pairId: Int64) async throws(JournalError) -> [BundleMemberRecord] {
        try await read { db in
            try BundleMemberRecord.filter(Column("pairId") == pairId)
                .order(Column("bundle"), Column("path")).fetchAll(db)
        }
    }

    /// Replaces what the journal knows of one bundle (after reading its manifest from the remote).
    public func replaceBundle(_ bundle: BundleRecord, members: [BundleMemberRecord]) async throws(JournalError) {
        try await write { db in
            try db.execute(sql: "DELETE FROM archiveBundle WHERE pairId = ? AND name = ?", arguments: [bundle.pairId, bundle.name])
            try bundle.insert(db)
            for member in members { try member.insert(db) }
        }
    }

    /// Records a bundle just uploaded: the bundle, its members, and its files in sync, in
    /// one transaction, so the journal never knows the files as sent without the bundle.
    public func recordUploadedBundle(_ bundle: BundleRecord, members: [BundleMemberRecord],
                                     files: [FileRecord]) async throws(JournalError) {
        try await write { db in
            try db.execute(sql: "DELETE FROM archiveBundle WHERE pairId = ? AND name = ?", arguments: [bundle.pairId, bundle.name])
            try bundle.insert(db)
            for member in members { try member.insert(db) }
            for file in files { try file.write(db) }
        }
    }

    /// Marks members as having left their bundles.
    public func markBundleMembersStale(pairId: Int64, members: [(bundle: String, path: String)]) async throws(JournalError) {
        let rows = members.map { [$0.bundle, $0.path] }
        try await write { db in
            let statement = try db.cachedStatement(
                sql: "UPDATE archiveMember SET stale = 1 WHERE pairId = ? AND bundle = ? AND path = ?")
            for row in rows { try statement.execute(arguments: [pairId, row[0], row[1]]) }
        }
    }

    /// Forgets a bundle and its members (it is gone from the remote).
    public func removeBundle(pairId: Int64, name: String) async throws(JournalError) {
        try await write { db in
            try db.execute(sql: "DELETE FROM archiveBundle WHERE pairId = ? AND name = ?", arguments: [pairId, name])
        }
    }
}
