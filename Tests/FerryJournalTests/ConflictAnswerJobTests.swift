@testable import FerryJournal
import FerryPluginAPI
import FerryTestSupport
import Testing

@testable import FerryPlanning

/// `ferry resolve` (or the daemon's API) writes its answer into the journal while a run of
/// the same folder may be reading its jobs from it, a page at a time.
@Suite("an answer to a conflict and the jobs of a run under way")
struct ConflictAnswerJobTests {
    @Test("keep both is no job until planning decides the renames; keep local and keep remote are")
    func keepBothWaitsForPlanning() async throws {
        let folder = TemporaryDirectory()
        let journal = try await StateFolder(directory: folder.path).journal()
        let pairId = try #require(try await journal.folderPair(name: "p", localRoot: "/a", remoteLocation: "b", at: 0).id)
        var rows: [FileRecord] = []
        for path in ["a.txt", "b.txt", "c.txt"] {
            var record = FileRecord(pairId: pairId, path: path, queue: "media", status: .inSync, updatedAt: 1)
            record.local = LocalVersion(size: 11, modifiedNanos: 2_000, inode: 7)
            record.remote = RemoteVersion(size: 12, modifiedNanos: 3_000, etag: nil)
            record.syncedLocal = LocalVersion(size: 6, modifiedNanos: 1_000, inode: 7)
            record.syncedRemote = RemoteVersion(size: 6, modifiedNanos: 1_000, etag: nil)
            record.markConflict(reason: "changed on both sides")
            rows.append(record)
        }
        try await journal.applyPlan(rows)
        #expect(try await journal.pendingJobs(pairId: pairId, queue: "media", after: nil, limit: 10).isEmpty)

        for (path, answer) in [("a.txt", ConflictPolicy.local), ("b.txt", .remote), ("c.txt", .keepBoth)] {
            #expect(try await journal.resolveConflicts(pairId: pairId, path: path, keep: answer, at: 5) == [path])
        }
        // What a run under way would take on its next page: the one-sided answers only.
        let jobs = try await journal.pendingJobs(pairId: pairId, queue: "media", after: nil, limit: 10)
        #expect(jobs.map(\.path) == ["a.txt", "b.txt"])
        #expect(jobs.map(\.action) == [.upload, .download])
        // Keep both is no longer a conflict, and its answer waits for the next plan.
        let both = try #require(try await journal.record(pairId: pairId, path: "c.txt"))
        #expect(both.status == .needsUpload && both.action == nil && both.resolution == .keepBoth)
        let settings = SyncPlanSettings(host: "laptop", stamp: "20261207-185257")
        guard case .move(.keepBothLocalLoses, _)? = Optional(Planner.decideTwoWay(both, settings: settings)) else {
            Issue.record("planning does not keep both: \(Planner.decideTwoWay(both, settings: settings))")
            return
        }
    }
}
