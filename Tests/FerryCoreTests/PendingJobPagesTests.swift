@testable import FerryJournal
import FerryTestSupport
import Testing

@testable import FerryCore
@testable import FerryEngine
@testable import FerryPlanning

@Suite("reading a run's jobs from the journal a page at a time")
struct PendingJobPagesTests {
    static let classifier = try! QueueClassifier(rules: QueueRule.standard, defaultQueue: "media")

    /// 3,000 rows over four queues (and one queue the config no longer names), a third of
    /// them without a job (in sync, failed for good, in conflict).
    static func filledJournal(_ folder: TemporaryDirectory) async throws -> (Journal, Int64, Set<String>) {
        let journal = try await StateFolder(directory: folder.path).journal()
        let pairId = try #require(try await journal.folderPair(name: "p", localRoot: "/l", remoteLocation: "r", at: 0).id)
        let queues = ["thumbnails", "media", "gpx", "archives", "retired"]
        var rows: [FileRecord] = []
        var pending: Set<String> = []
        for index in 0..<3_000 {
            let path = "d\(index % 17)/f\(index).jpg"
            let (status, action): (FileStatus, FileAction?) = switch index % 6 {
            case 0: (.inSync, nil)
            case 1: (.syncError, .upload)
            case 2: (.conflict, nil)
            case 3: (.needsDownload, .download)
            case 4: (.uploading, .upload)
            default: (.needsUpload, .deleteRemote)
            }
            var record = FileRecord(pairId: pairId, path: path, queue: queues[index % queues.count], status: status, updatedAt: 1)
            record.localSize = Int64(index)
            record.action = action
            if action == .download { record.remoteSize = 5 }
            if record.status.isPending { pending.insert(path) }
            rows.append(record)
        }
        try await journal.applyPlan(rows)
        return (journal, pairId, pending)
    }

    @Test("every pending job is read exactly once, queues in priority order, paths in byte order within a queue")
    func readsEachJobOnce() async throws {
        let folder = TemporaryDirectory()
        let (journal, pairId, pending) = try await Self.filledJournal(folder)
        var pages = try await PendingJobPages(journal: journal, pairId: pairId, classifier: Self.classifier, pageSize: 97)
        #expect(pages.totals.map(\.queue) == ["thumbnails", "media", "gpx", "archives", "retired"])
        #expect(pages.totals.reduce(0) { $0 + $1.total.files } == pending.count)

        var seen: [FileRecord] = []
        var rounds = 0
        // Bounded so that pages that never run out fail the test instead of hanging it.
        while !pages.isExhausted && rounds <= pending.count {
            // The scheduler holds nothing between rounds: every queue is refilled.
            let page = try await pages.refill { _ in 0 }
            seen += page
            // Results written behind the cursors must not come back.
            var done = page.prefix(10).map { $0 }
            for index in done.indices { done[index].confirmInSync() }
            try await journal.bookResults(done)
            rounds += 1
        }
        #expect(pages.isExhausted, "pages still not exhausted after \(rounds) rounds")
        #expect(Set(seen.map(\.path)) == pending)
        #expect(seen.count == pending.count)
        #expect(rounds > 3, "pages of 97 rows should take several rounds, took \(rounds)")
        for queue in ["thumbnails", "media"] {
            let paths = seen.filter { $0.queue == queue }.map(\.path)
            #expect(paths == paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }, "\(queue) out of path order")
        }
    }

    @Test("a queue with enough waiting jobs is not read further until they run low")
    func refillsOnlyLowQueues() async throws {
        let folder = TemporaryDirectory()
        let (journal, pairId, _) = try await Self.filledJournal(folder)
        var pages = try await PendingJobPages(journal: journal, pairId: pairId, classifier: Self.classifier, pageSize: 50)
        let first = try await pages.refill { _ in 0 }
        #expect(Set(first.map(\.queue)).count == 5)
        let thumbnailsRank = Self.classifier.rank(of: "thumbnails")
        let second = try await pages.refill { rank in rank == thumbnailsRank ? 0 : PendingJobPages.lowWater }
        #expect(!second.isEmpty && second.allSatisfy { $0.queue == "thumbnails" })
    }

    @Test("totals count files and the bytes each job moves")
    func totals() async throws {
        let folder = TemporaryDirectory()
        let (journal, pairId, _) = try await Self.filledJournal(folder)
        let totals = try await journal.pendingJobTotals(pairId: pairId)
        let all = try await journal.records(pairId: pairId).filter(\.status.isPending)
        for total in totals {
            let jobs = all.filter { $0.queue == total.queue }
            #expect(total.files == jobs.count)
            #expect(total.bytes == jobs.reduce(0) { $0 + $1.transferBytes }, "\(total.queue)")
        }
    }
}
