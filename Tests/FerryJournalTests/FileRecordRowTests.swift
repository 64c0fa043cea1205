@testable import FerryJournal
import FerryTestSupport
import GRDB
import Testing

@testable import FerryPlanning

@Suite("FileRecord rows")
struct FileRecordRowTests {
    static func fullRecord(path: String) -> FileRecord {
        var record = FileRecord(pairId: 1, path: path, queue: "media", status: .uploading, updatedAt: 12.5)
        record.action = .upload
        record.local = LocalVersion(size: 10, modifiedNanos: 11, inode: 12)
        record.localHash = "h"
        record.remote = RemoteVersion(size: 20, modifiedNanos: 21, etag: "\"e\"")
        record.syncedLocal = LocalVersion(size: 30, modifiedNanos: 31, inode: 32)
        record.syncedRemote = RemoteVersion(size: 40, modifiedNanos: 41, etag: "\"s\"")
        record.syncedAt = 50.25
        record.attempts = 3
        record.nextAttemptAt = 60.5
        record.lastError = "boom"
        record.transferLocal = LocalVersion(size: 70, modifiedNanos: 71, inode: 72)
        return record
    }

    @Test("the explicit column list is exactly the table's columns, and SQLite computes the settled flag")
    func columnsMatchTable() async throws {
        let folder = TemporaryDirectory()
        let journal = try await StateFolder(directory: folder.path).journal()
        _ = journal
        let queue = try DatabaseQueue(path: folder.child("journal.sqlite"))
        let columns = try await queue.read { db in try db.columns(in: "file").map(\.name) }
        #expect(columns == FileRecord.columnNames + ["settled"])
    }

    @Test("every field survives a write and a read, and a second write replaces the row")
    func roundTrip() async throws {
        let folder = TemporaryDirectory()
        let journal = try await StateFolder(directory: folder.path).journal()
        let pair = try await journal.folderPair(name: "p", localRoot: "/a", remoteLocation: "b", at: 0)
        var record = Self.fullRecord(path: "x/IMG 1.jpg")
        record.pairId = try #require(pair.id)
        try await journal.applyPlan([record])
        #expect(try await journal.record(pairId: record.pairId, path: record.path) == record)

        var cleared = FileRecord(pairId: record.pairId, path: record.path, queue: "thumbnails", status: .inSync, updatedAt: 99)
        cleared.local = LocalVersion(size: 1, modifiedNanos: 2, inode: 3)
        try await journal.applyPlan([cleared])
        #expect(try await journal.record(pairId: record.pairId, path: record.path) == cleared)
        #expect(try await journal.records(pairId: record.pairId).count == 1)
    }
}
