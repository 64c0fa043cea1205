@testable import FerryJournal
import FerryTestSupport
import GRDB
import Testing

@testable import FerryPlanning

/// v13 made the `file` table anew with a stored settled flag: a journal written before it
/// keeps every row and index, and each row's flag is what the condition says of it.
@Suite("the stored settled flag of an older journal")
struct SettledFlagMigrationTests {
    @Test("rows written before v13 keep their columns and get the flag the condition gives them")
    func olderJournalMigrates() async throws {
        let folder = TemporaryDirectory()
        let path = StateFolder.journalPath(in: folder.path)
        let before = try DatabaseQueue(path: path)
        try JournalMigrations.migrator.migrate(before, upTo: "v12-remote-spelling")
        var settled = FileRecord(pairId: 1, path: "a.jpg", queue: "media", status: .inSync, updatedAt: 1)
        settled.local = LocalVersion(size: 1, modifiedNanos: 2, inode: 3)
        settled.remote = RemoteVersion(size: 1, modifiedNanos: 2, etag: "\"e\"")
        settled.syncedLocal = settled.local
        settled.syncedRemote = settled.remote
        var waiting = settled
        waiting.path = "b.jpg"
        waiting.plan(.upload)
        var failed = settled
        failed.path = "c.jpg"
        failed.failForGood(failures: 3, error: "refused", at: 2)
        var unknownRemote = settled
        unknownRemote.path = "d.jpg"
        unknownRemote.remote = nil
        let rows = [settled, waiting, failed, unknownRemote]
        try await before.write { db in
            try db.execute(sql: "INSERT INTO folderPair (id, name, localRoot, remoteLocation, createdAt) VALUES (1, 'p', '/l', 'r', 0)")
            for row in rows { try row.insert(db) }
        }
        try before.close()

        let journal = try await StateFolder(directory: folder.path).journal()
        for row in rows {
            #expect(try await journal.record(pairId: 1, path: row.path) == row, "\(row.path)")
        }
        let flags = try await journal.quickCheckRows(pairId: 1, after: nil, limit: 10).map { ($0.path, $0.isSettled) }
        #expect(flags.map(\.0) == ["a.jpg", "b.jpg", "c.jpg", "d.jpg"])
        #expect(flags.map(\.1) == [true, false, false, false])

        let after = try DatabaseQueue(path: path)
        let (indexes, violations, freePages) = try await after.read { db in
            (Set(try db.indexes(on: "file").map(\.name)), try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count,
             try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? -1)
        }
        #expect(indexes.isSuperset(of: ["file_by_status", "file_jobs", "file_partial_transfers", "file_hidden"]), "\(indexes)")
        #expect(violations == 0)
        // Vacuumed after the table was made anew: the old table's pages are not kept.
        #expect(freePages == 0)
    }
}
