@testable import FerryJournal
import FerryPluginAPI
import FerryTestSupport
import GRDB
import Testing

@testable import FerryPlanning

@Suite("the questions a run asks at its start use their partial indexes")
struct JournalPartialIndexTests {
    static func plan(of sql: String, in path: String) async throws -> String {
        let queue = try DatabaseQueue(path: path)
        return try await queue.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: [1]).map { $0["detail"] as String }.joined(separator: "; ")
        }
    }

    @Test("partial transfers and hidden files are found by index, not by reading every row")
    func indexesAreUsed() async throws {
        let folder = TemporaryDirectory()
        let path = folder.child("journal.sqlite")
        _ = try Journal.open(at: path)
        let partial = try await Self.plan(of: "SELECT path FROM file WHERE pairId = ? AND (\(FileRecord.hasPartialTransfer))", in: path)
        #expect(partial.contains("file_partial_transfers"), "\(partial)")
        let hidden = try await Self.plan(of: "SELECT path FROM file WHERE pairId = ? AND syncedRemoteSize IS NOT NULL AND (\(FileRecord.isHidden))", in: path)
        #expect(hidden.contains("file_hidden"), "\(hidden)")
    }

    @Test("the indexed questions find exactly the matching rows")
    func answersAreRight() async throws {
        let folder = TemporaryDirectory()
        let journal = try await StateFolder(directory: folder.path).journal()
        let pairId = try #require(try await journal.folderPair(name: "p", localRoot: "/a", remoteLocation: "b", at: 0).id)
        var rows: [FileRecord] = []
        for (path, status, partial) in [("a.jpg", FileStatus.inSync, false), ("b.jpg", .uploading, false),
                                        ("c.jpg", .needsUpload, true), (".hidden/d.jpg", .inSync, false),
                                        ("e/.f.jpg", .inSync, false), ("g.h/i.jpg", .inSync, false)] {
            var record = FileRecord(pairId: pairId, path: path, queue: "media", status: status, updatedAt: 1)
            record.syncedRemote = RemoteVersion(size: 5, modifiedNanos: 6, etag: nil)
            if partial { record.transferLocal = LocalVersion(size: 5, modifiedNanos: 6, inode: 7) }
            rows.append(record)
        }
        try await journal.applyPlan(rows)
        #expect(Set(try await journal.pathsWithPartialTransfers(pairId: pairId)) == ["b.jpg", "c.jpg"])
        #expect(Set(try await journal.hiddenPaths(pairId: pairId)) == [".hidden/d.jpg", "e/.f.jpg"])
        #expect(Set(try await journal.syncedHiddenFiles(pairId: pairId).map(\.path)) == [".hidden/d.jpg", "e/.f.jpg"])
        #expect(try await journal.fileCount() == rows.count)
    }

    @Test("whether any file waits for a transfer is asked of the status index, pair by pair")
    func pendingFilesByIndex() async throws {
        let folder = TemporaryDirectory()
        let journal = try await StateFolder(directory: folder.path).journal()
        #expect(try await journal.hasPendingFiles() == false)
        var pairs: [Int64] = []
        for name in ["p", "q"] {
            pairs.append(try #require(try await journal.folderPair(name: name, localRoot: "/" + name, remoteLocation: "r", at: 0).id))
        }
        let synced = pairs.flatMap { pairId in
            ["a.jpg", "b.jpg"].map { FileRecord(pairId: pairId, path: $0, queue: "media", status: .inSync, updatedAt: 1) }
        }
        try await journal.applyPlan(synced + [FileRecord(pairId: pairs[1], path: "c.jpg", queue: "media", status: .conflict,
                                                         updatedAt: 1)])
        #expect(try await journal.hasPendingFiles() == false)
        for status in FileStatus.allCases where status.isPending {
            try await journal.applyPlan([FileRecord(pairId: pairs[1], path: "d.jpg", queue: "media", status: status, updatedAt: 2)])
            #expect(try await journal.hasPendingFiles(), "\(status)")
        }
        let plan = try await Self.plan(of: "SELECT EXISTS (SELECT 1 FROM file WHERE pairId = ? AND status IN ('needsUpload', 'uploading'))",
                                       in: folder.child("journal.sqlite"))
        #expect(plan.contains("file_by_status"), "\(plan)")
    }
}
