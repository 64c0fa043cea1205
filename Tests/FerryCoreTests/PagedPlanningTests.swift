@testable import FerryJournal
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Synchronization
import Testing

@testable import FerryCore
@testable import FerryPlanning

@Suite("planning a page of journal rows at a time")
struct PagedPlanningTests {
    static let classifier = try! QueueClassifier(rules: QueueRule.standard, defaultQueue: "media")
    static let now = 1_800_000_000.0

    /// A pair in every state at once: unchanged, changed locally, changed remotely, new on
    /// either side, gone from either side, with names that sort differently as bytes and
    /// as Swift strings would not (upper case, non-ASCII, `.hidden`, nested folders).
    struct Fixture {
        var records: [FileRecord] = []
        var scan: [LocalEntry] = []
        var remote: [String: RemoteEntry] = [:]
    }

    static func fixture(pairId: Int64) throws -> Fixture {
        var fixture = Fixture()
        var random = DeterministicBytes(seed: 77)
        let names = ["a.jpg", "B.jpg", "é.jpg", "z/ä.gpx", ".thumbnails/a.jpg", "z/y/x.mp4", "Z.jpg", "a b.jpg", "a-b.jpg", "ab.jpg"]
        for index in 0..<240 {
            let path = "d\(index % 9)/" + names[index % names.count].replacingOccurrences(of: ".", with: "\(index).")
            let local = LocalVersion(size: Int64(index), modifiedNanos: Int64(index) * 1_000_000_000, inode: Int64(index))
            let remote = RemoteVersion(size: Int64(index), modifiedNanos: Int64(index) * 1_000_000_000, etag: "\"\(index)\"")
            let state = random.int(below: 6)
            let known = state != 5
            if known {
                var record = FileRecord(pairId: pairId, path: path, queue: "media", status: .inSync, updatedAt: 1)
                record.local = local
                record.remote = remote
                record.syncedLocal = local
                record.syncedRemote = remote
                fixture.records.append(record)
            }
            // 0 unchanged, 1 changed locally, 2 changed remotely, 3 gone locally, 4 gone remotely, 5 new on both
            if state != 3 {
                var version = local
                if state == 1 { version.modifiedNanos += 7 }
                fixture.scan.append(LocalEntry(path: try RelativePath(path), version: version))
            }
            if state != 4 {
                var version = remote
                if state == 2 { version.etag = "\"changed\"" }
                fixture.remote[path] = RemoteEntry(path: try RelativePath(path), kind: .file, size: version.size,
                                                   modifiedNanos: version.modifiedNanos, etag: version.etag)
            }
        }
        return fixture
    }

    static func journal(_ folder: TemporaryDirectory, _ fixture: (Int64) throws -> Fixture) async throws -> (Journal, Int64, Fixture) {
        let journal = try await StateFolder(directory: folder.path).journal()
        let pair = try await journal.folderPair(name: "p", localRoot: "/l", remoteLocation: "r", at: 0)
        let pairId = try #require(pair.id)
        let data = try fixture(pairId)
        try await journal.applyPlan(data.records)
        return (journal, pairId, data)
    }

    static func summary(_ plan: Plan) -> [String] {
        plan.jobs.map { "job \($0.path) \($0.action?.rawValue ?? "-") \($0.status.rawValue)" }
            + plan.conflicts.map { "conflict \($0.path)" }.sorted()
            + plan.changedRecords.map { "changed \($0.path) \($0.status.rawValue)" }.sorted()
            + plan.forgottenPaths.map { "forgotten \($0)" }.sorted()
            + ["unchanged \(plan.unchangedCount)", "adopted \(plan.adoptedCount)", "local \(plan.localFileCount)"]
    }

    @Test("any page size gives the plan of the whole journal at once", arguments: [1, 3, 7, 64, 10_000])
    func sameAsWholePlan(pageSize: Int) async throws {
        for mode in [SyncMode.push, .pull] {
            let folder = TemporaryDirectory()
            let (journal, pairId, data) = try await Self.journal(folder, Self.fixture)
            let options = PlanOptions(mode: mode, mirror: true, forceDeletes: true)
            var records: [String: FileRecord] = [:]
            for record in data.records { records[record.path] = record }
            // The fixture's rows all say `media`: the .gpx files' rows change queue, and are written.
            let (merged, requeued) = ScanReconciler.reconcile(records: records, scan: ScanResult(entries: data.scan, notes: []),
                                                                    pairId: pairId, classifier: Self.classifier, now: Self.now)
            #expect(!requeued.isEmpty)
            let whole = try Planner.plan(pairId: pairId, records: merged, remote: data.remote, options: options,
                                         classifier: Self.classifier, now: Self.now, requeued: requeued)
            var paged = PagedPlanning(journal: journal, pairId: pairId, options: options, classifier: Self.classifier,
                                      now: Self.now, writesChanges: false)
            paged.pageSize = pageSize
            let parts = try await paged.plan(scan: ScanResult(entries: data.scan.shuffled(), notes: []), remote: data.remote)
            #expect(Self.summary(parts) == Self.summary(whole), "mode \(mode), page size \(pageSize)")
            #expect(!whole.jobs.isEmpty && whole.unchangedCount > 0)
        }
    }

    @Test("rows written together and read by position are exactly what the named decoding gives, every field set and unset")
    func positionalDecoding() async throws {
        let folder = TemporaryDirectory()
        let (journal, pairId, _) = try await Self.journal(folder) { _ in Fixture() }
        var full = FileRecord(pairId: pairId, path: "d/IMG_1.jpg", queue: "media", status: .inSync, updatedAt: 11)
        full.local = LocalVersion(size: 1, modifiedNanos: 2, inode: 3)
        full.localHash = "hash"
        full.remote = RemoteVersion(size: 4, modifiedNanos: 5, etag: "\"e\"")
        full.syncedLocal = LocalVersion(size: 6, modifiedNanos: 7, inode: 8)
        full.syncedRemote = RemoteVersion(size: 9, modifiedNanos: 10, etag: "\"s\"")
        full.syncedAt = 12
        full.scheduleRetry(action: .upload, failures: 2, error: "boom", notBefore: 13, at: 14)
        full.transferLocal = LocalVersion(size: 15, modifiedNanos: 16, inode: 17)
        full.transferETag = "\"t\""
        full.transferState = "upload u1 parts 1 2"
        full.moveTarget = "trash/IMG_1.jpg"
        full.resolution = .keepBoth
        full.fetchedAt = 18
        full.remoteSpelling = "d/IMG_1.jpg"
        let bare = FileRecord(pairId: pairId, path: "a.jpg", queue: "thumbnails", status: .localOnly, updatedAt: 1)
        var second = full
        second.path = "e/IMG_2.jpg"
        // Written together, the rows after the first are bound in place of the one before
        // (`Statement.rebind`): every field goes from set to unset and back.
        try await journal.applyPlan([full, bare, second])
        let paged = try await journal.records(pairId: pairId, after: nil, limit: 10)
        #expect(paged == [bare, full, second])
        #expect(try await journal.record(pairId: pairId, path: full.path) == full)
    }

    @Test("planning holds the rows of one part at a time, whatever the size of the tree", arguments: [10_000, 100_000])
    func boundedRows(files: Int) async throws {
        let folder = TemporaryDirectory()
        let pageSize = 1_000
        let (journal, pairId, data) = try await Self.journal(folder) { pairId in
            var fixture = Fixture()
            for index in 0..<files {
                let path = "d\(index % 97)/IMG_\(index).jpg"
                let local = LocalVersion(size: Int64(index), modifiedNanos: 1_000_000_000, inode: Int64(index))
                let remote = RemoteVersion(size: Int64(index), modifiedNanos: 1_000_000_000, etag: nil)
                var record = FileRecord(pairId: pairId, path: path, queue: "media", status: .inSync, updatedAt: 1)
                record.local = local
                record.remote = remote
                record.syncedLocal = local
                record.syncedRemote = remote
                fixture.records.append(record)
                // Every tenth file changed locally.
                var scanned = local
                if index % 10 == 0 { scanned.modifiedNanos += 1 }
                fixture.scan.append(LocalEntry(path: try RelativePath(path), version: scanned))
            }
            return fixture
        }
        var planning = PagedPlanning(journal: journal, pairId: pairId, options: PlanOptions(mode: .push),
                                     classifier: Self.classifier, now: Self.now, writesChanges: true)
        planning.pageSize = pageSize
        // A push between listings: the remote side is the journal's, read with its rows.
        let plan = try await planning.plan(local: LocalScanStream(scan: ScanResult(entries: data.scan, notes: [])),
                                           remote: .journal)
        #expect(plan.unchangedCount == files - files / 10)
        #expect(try await journal.pendingJobTotals(pairId: pairId).reduce(0) { $0 + $1.files } == files / 10)
        // A page of rows, the scanned files of the part, the remote entries of the part (one
        // per row here), the next page of rows and of scanned files being read while the
        // part is planned, and the last part's changed rows being written: six pages at most.
        #expect(plan.peakPartRows <= 6 * pageSize, "\(plan.peakPartRows) rows held at \(files) files")
        #expect(plan.peakPartRows >= pageSize)
    }

    @Test("a plan that is not written (a dry run) hands over its jobs part by part, in path order, and keeps none",
          arguments: [(7, 240), (1_000, 10_000)])
    func dryRunHandsJobsOver(pageSize: Int, files: Int) async throws {
        let folder = TemporaryDirectory()
        let (journal, pairId, data) = try await Self.journal(folder) { pairId in
            guard files > 240 else { return try Self.fixture(pairId: pairId) }
            var fixture = Fixture()
            for index in 0..<files {
                let path = "d\(index % 97)/IMG_\(index).jpg"
                // Every other file new, the rest known and changed locally.
                let local = LocalVersion(size: Int64(index), modifiedNanos: 1_000_000_000, inode: Int64(index))
                if index % 2 == 1 {
                    var record = FileRecord(pairId: pairId, path: path, queue: "media", status: .inSync, updatedAt: 1)
                    record.local = local
                    record.syncedLocal = local
                    fixture.records.append(record)
                }
                var scanned = local
                scanned.modifiedNanos += 1
                fixture.scan.append(LocalEntry(path: try RelativePath(path), version: scanned))
            }
            return fixture
        }
        var planning = PagedPlanning(journal: journal, pairId: pairId, options: PlanOptions(mode: .push, mirror: true, forceDeletes: true),
                                     classifier: Self.classifier, now: Self.now, writesChanges: false)
        planning.pageSize = pageSize
        let whole = try await planning.plan(scan: ScanResult(entries: data.scan, notes: []), remote: data.remote)
        let handed = Mutex<[FileRecord]>([])
        planning.reportsJobs = { jobs in handed.withLock { $0 += jobs } }
        let streamed = try await planning.plan(scan: ScanResult(entries: data.scan, notes: []), remote: data.remote)

        func described(_ jobs: [FileRecord]) -> [String] {
            jobs.map { "\($0.path) \($0.action.map { "\($0)" } ?? "none") \($0.queue) \($0.transferBytes)" }
        }
        let jobs = handed.withLock { $0 }
        #expect(!jobs.isEmpty)
        #expect(described(jobs) == described(whole.jobs.sorted { $0.path.precedesInUTF8Order($1.path) }))
        #expect(streamed.jobs.isEmpty && streamed.changedRecords.isEmpty && streamed.forgottenPaths.isEmpty)
        #expect(streamed.peakPartRows <= 6 * pageSize, "\(streamed.peakPartRows) rows held at \(files) files")
    }

    @Test("a first run (empty journal, large scan and listing) plans in parts the same as at once", arguments: [1, 7, 64])
    func emptyJournalSameAsWholePlan(pageSize: Int) async throws {
        for mode in [SyncMode.push, .pull] {
            let folder = TemporaryDirectory()
            let (journal, pairId, data) = try await Self.journal(folder) { pairId in
                var fixture = try Self.fixture(pairId: pairId)
                fixture.records = []
                return fixture
            }
            let options = PlanOptions(mode: mode, forceDeletes: true)
            let merged = ScanReconciler.reconcile(records: [:], scan: ScanResult(entries: data.scan, notes: []),
                                                  pairId: pairId, classifier: Self.classifier, now: Self.now).merged
            let whole = try Planner.plan(pairId: pairId, records: merged, remote: data.remote, options: options,
                                         classifier: Self.classifier, now: Self.now)
            var paged = PagedPlanning(journal: journal, pairId: pairId, options: options, classifier: Self.classifier,
                                      now: Self.now, writesChanges: false)
            paged.pageSize = pageSize
            let parts = try await paged.plan(scan: ScanResult(entries: data.scan.shuffled(), notes: []), remote: data.remote)
            #expect(Self.summary(parts) == Self.summary(whole), "mode \(mode), page size \(pageSize)")
            #expect(!whole.changedRecords.isEmpty)
        }
    }

    @Test("a file left out as still being written is not taken for deleted, by a mirror push or a two-way sync",
          arguments: [SyncMode.push, .sync])
    func unsettledIsNotDeleted(mode: SyncMode) async throws {
        let folder = TemporaryDirectory()
        let (journal, pairId, data) = try await Self.journal(folder) { pairId in
            var fixture = Fixture()
            for name in ["keep.jpg", "being-written.mp4"] {
                let local = LocalVersion(size: 10, modifiedNanos: 1_000_000_000, inode: 7)
                let remote = RemoteVersion(size: 10, modifiedNanos: 1_000_000_000, etag: "\"e\"")
                var record = FileRecord(pairId: pairId, path: name, queue: "media", status: .inSync, updatedAt: 1)
                record.local = local
                record.remote = remote
                record.syncedLocal = local
                record.syncedRemote = remote
                fixture.records.append(record)
                fixture.remote[name] = RemoteEntry(path: try RelativePath(name), kind: .file, size: 10,
                                                   modifiedNanos: 1_000_000_000, etag: "\"e\"")
                // The watcher holds back the file under rewrite: the scan does not show it.
                if name == "keep.jpg" { fixture.scan.append(LocalEntry(path: try RelativePath(name), version: local)) }
            }
            return fixture
        }
        let sync = mode == .sync ? SyncPlanSettings(host: "h", stamp: "s") : nil
        var planning = PagedPlanning(journal: journal, pairId: pairId,
                                     options: PlanOptions(mode: mode, mirror: mode == .push, forceDeletes: true, sync: sync),
                                     classifier: Self.classifier, now: Self.now, writesChanges: true)
        planning.unsettled = ["being-written.mp4"]
        _ = try await planning.plan(scan: ScanResult(entries: data.scan, notes: []), remote: data.remote)
        let row = try #require(try await journal.record(pairId: pairId, path: "being-written.mp4"))
        #expect(row.action == nil && row.status == .inSync, "\(mode): \(row)")
        #expect(row.local != nil)
    }

    @Test("a plan refused by the deletion guard writes no deletion job into the journal")
    func refusedDeletionsAreNotWritten() async throws {
        let folder = TemporaryDirectory()
        let (journal, pairId, data) = try await Self.journal(folder, Self.fixture)
        var planning = PagedPlanning(journal: journal, pairId: pairId, options: PlanOptions(mode: .push, mirror: true, maxDeletes: 0),
                                     classifier: Self.classifier, now: Self.now, writesChanges: true)
        planning.pageSize = 5
        await #expect(throws: PagedPlanning.Failure.self) {
            _ = try await planning.plan(scan: ScanResult(entries: data.scan, notes: []), remote: data.remote)
        }
        let rows = try await journal.records(pairId: pairId)
        #expect(!rows.contains { $0.action == .deleteRemote }, "deletion jobs written although the plan was refused")
        #expect(rows.contains { $0.action == .upload }, "the other changes are written as the pages go")
    }
}
