import FerryJournal
import FerryPlanning
import FerryTestSupport
import Testing

/// `Journal.change`: one file's read, transition and write in one transaction.
@Suite("Journal change")
struct JournalChangeTests {
    @Test("changes made at the same time by many writers are all kept; a refused transition writes nothing")
    func concurrentChangesKeepEveryOne() async throws {
        let folder = TemporaryDirectory()
        let journal = try await StateFolder(directory: folder.path).journal()
        let pairId = try #require(try await journal.folderPair(name: "p", localRoot: "/a", remoteLocation: "b", at: 0).id)
        try await journal.applyPlan([FileRecord(pairId: pairId, path: "IMG_1.jpg", queue: "media", status: .inSync, updatedAt: 0)])
        // A read, then a save, would lose most of these: each writer read the same row.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    _ = try? await journal.change(pairId: pairId, path: "IMG_1.jpg") { record in
                        record.updatedAt += 1
                        return true
                    }
                }
            }
        }
        #expect(try await journal.record(pairId: pairId, path: "IMG_1.jpg")?.updatedAt == 100)

        let refused = try await journal.change(pairId: pairId, path: "IMG_1.jpg") { record in
            record.updatedAt = -1
            return false
        }
        #expect(refused == nil)
        #expect(try await journal.record(pairId: pairId, path: "IMG_1.jpg")?.updatedAt == 100)
        let missing = try await journal.change(pairId: pairId, path: "nothing.jpg") { _ in true }
        #expect(missing == nil)
        #expect(try await journal.record(pairId: pairId, path: "nothing.jpg") == nil)
        withExtendedLifetime(folder) {}
    }
}
