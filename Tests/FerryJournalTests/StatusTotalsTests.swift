import FerryJournal
import FerryPlanning
import FerryTestSupport
import Testing

@Suite("status totals")
struct StatusTotalsTests {
    @Test("a pair's files and bytes per status are summed over its queues, read from a real journal")
    func sumsOverQueues() async throws {
        let folder = TemporaryDirectory()
        let journal = try await StateFolder(directory: folder.path).journal()
        let pairId = try #require(try await journal.folderPair(name: "p", localRoot: "/a", remoteLocation: "b", at: 0).id)
        let other = try #require(try await journal.folderPair(name: "q", localRoot: "/q", remoteLocation: "b", at: 0).id)
        func row(_ pair: Int64, _ path: String, _ queue: String, _ status: FileStatus, _ size: Int64) -> FileRecord {
            var record = FileRecord(pairId: pair, path: path, queue: queue, status: status, updatedAt: 0)
            record.local = LocalVersion(size: size, modifiedNanos: 1, inode: 1)
            return record
        }
        try await journal.applyPlan([
            row(pairId, "a.jpg", "media", .syncError, 10), row(pairId, "a.gpx", "tracks", .syncError, 5),
            row(pairId, "b.jpg", "media", .conflict, 7), row(pairId, "c.jpg", "media", .inSync, 1),
            row(other, "x.jpg", "media", .syncError, 100),
        ])
        let totals = try await journal.statusTotals(pairId: pairId)
        #expect(totals[.syncError] == .init(files: 2, bytes: 15))
        #expect(totals.failedFiles == 2)
        #expect(totals.conflictedFiles == 1)
        #expect(totals[.needsUpload] == .init(files: 0, bytes: 0))
        #expect(totals.byStatus.keys.sorted { $0.rawValue < $1.rawValue } == [.conflict, .inSync, .syncError])
    }
}
