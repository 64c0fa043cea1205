import Testing
@testable import FerryCore
@testable import FerryPlanning
import FerryPluginAPI

@Suite("ScanReconciler")
struct ScanReconcilerTests {
    static let classifier: QueueClassifier = {
        do {
            return try QueueClassifier(rules: QueueRule.standard, defaultQueue: "media")
        } catch {
            fatalError("the standard queue rules must compile: \(error)")
        }
    }()

    static let t0: Int64 = 1_700_000_000_000_000_000

    static func entry(_ path: String, size: Int64, modified: Int64 = t0, inode: Int64 = 1) throws -> LocalEntry {
        LocalEntry(path: try RelativePath(path), version: LocalVersion(size: size, modifiedNanos: modified, inode: inode))
    }

    static func scan(_ entries: [LocalEntry]) -> ScanResult {
        ScanResult(entries: entries, notes: [])
    }

    static func reconcile(_ records: [String: FileRecord], _ entries: [LocalEntry], now: Double = 2000) -> [String: FileRecord] {
        ScanReconciler.reconcile(records: records, scan: scan(entries), pairId: 3, classifier: classifier, now: now).merged
    }

    /// Records as a first scan of this tree makes them.
    static func baseline() throws -> ([String: FileRecord], [LocalEntry]) {
        let entries = try [
            entry("DCIM/IMG_0001.JPG", size: 5_000_000),
            entry("DCIM/.thumbnails/IMG_0001.JPG", size: 20_000),
            entry("GPS/track.gpx", size: 3000),
            entry("old.zip", size: 1 << 30),
        ]
        return (reconcile([:], entries, now: 1000), entries)
    }

    @Test("a first scan creates localOnly records with classified queues")
    func newFiles() throws {
        let (records, _) = try Self.baseline()
        #expect(records.count == 4)
        let photo = try #require(records["DCIM/IMG_0001.JPG"])
        #expect(photo.status == .localOnly)
        #expect(photo.queue == "media")
        #expect(photo.pairId == 3)
        #expect(photo.path == "DCIM/IMG_0001.JPG")
        #expect(photo.local == LocalVersion(size: 5_000_000, modifiedNanos: Self.t0, inode: 1))
        #expect(photo.remote == nil)
        #expect(photo.syncedLocal == nil)
        #expect(photo.action == nil)
        #expect(photo.attempts == 0)
        #expect(photo.updatedAt == 1000)
        #expect(records["DCIM/.thumbnails/IMG_0001.JPG"]?.queue == "thumbnails")
        #expect(records["GPS/track.gpx"]?.queue == "gpx")
        #expect(records["old.zip"]?.queue == "archives")
    }

    @Test("an unchanged scan returns the records untouched")
    func unchanged() throws {
        let (records, entries) = try Self.baseline()
        #expect(Self.reconcile(records, entries, now: 5000) == records)
        #expect(Self.reconcile(records, entries.reversed(), now: 5000) == records)
    }

    @Test("an unchanged scan leaves synced records alone too")
    func unchangedSynced() throws {
        var (records, entries) = try Self.baseline()
        for key in records.keys {
            guard var record = records[key] else { continue }
            record.confirmInSync()
            record.syncedLocal = record.local
            record.localHash = "hash-\(key)"
            records[key] = record
        }
        #expect(Self.reconcile(records, entries, now: 5000) == records)
    }

    @Test("a new file among known ones gets a record; the others stay as they were")
    func newAmongKnown() throws {
        let (records, entries) = try Self.baseline()
        let merged = Self.reconcile(records, entries + [try Self.entry("DCIM/IMG_0002.CR3", size: 30_000_000)], now: 5000)
        #expect(merged.count == 5)
        let added = try #require(merged["DCIM/IMG_0002.CR3"])
        #expect(added.status == .localOnly)
        #expect(added.queue == "media")
        #expect(added.updatedAt == 5000)
        for (path, record) in records { #expect(merged[path] == record) }
    }

    @Test("a changed file gets its new local view, keeps its status and sync state, loses its hash")
    func changed() throws {
        var (records, entries) = try Self.baseline()
        let path = "GPS/track.gpx"
        var known = try #require(records[path])
        known.confirmInSync()
        known.syncedLocal = known.local
        known.remote = RemoteVersion(size: 3000, modifiedNanos: Self.t0, etag: nil)
        known.localHash = "abc"
        records[path] = known
        entries[2] = try Self.entry(path, size: 3500, modified: Self.t0 + 1)
        let merged = Self.reconcile(records, entries, now: 5000)
        let record = try #require(merged[path])
        #expect(record.local == LocalVersion(size: 3500, modifiedNanos: Self.t0 + 1, inode: 1))
        #expect(record.localHash == nil)
        #expect(record.updatedAt == 5000)
        #expect(record.status == .inSync, "the planner, not the scan, decides what a change means")
        #expect(record.syncedLocal == records[path]?.syncedLocal)
        #expect(record.remote == records[path]?.remote)
        #expect(merged.filter { $0.key != path }.mapValues { $0 } == records.filter { $0.key != path })
    }

    @Test("a change of inode alone updates the local view")
    func inodeChanged() throws {
        var (records, entries) = try Self.baseline()
        entries[0] = try Self.entry("DCIM/IMG_0001.JPG", size: 5_000_000, inode: 99)
        let merged = Self.reconcile(records, entries, now: 5000)
        #expect(merged["DCIM/IMG_0001.JPG"]?.local?.inode == 99)
        records["DCIM/IMG_0001.JPG"] = nil
        #expect(merged.filter { $0.key != "DCIM/IMG_0001.JPG" } == records)
    }

    @Test("a size change across a queue bound moves the file to another queue")
    func reclassified() throws {
        let (records, entries) = try Self.baseline()
        var grown = entries
        grown[1] = try Self.entry("DCIM/.thumbnails/IMG_0001.JPG", size: 5 << 20, modified: Self.t0 + 7)
        let merged = Self.reconcile(records, grown, now: 5000)
        #expect(merged["DCIM/.thumbnails/IMG_0001.JPG"]?.queue == "media")
    }

    @Test("new queue rules reclassify an unchanged file")
    func rulesChanged() throws {
        let (records, entries) = try Self.baseline()
        let classifier = try QueueClassifier(rules: [QueueRule(name: "all", match: ["*"], concurrency: 1)], defaultQueue: "all")
        let (merged, requeued) = ScanReconciler.reconcile(records: records, scan: Self.scan(entries), pairId: 3,
                                                                 classifier: classifier, now: 5000)
        #expect(merged.values.allSatisfy { $0.queue == "all" && $0.updatedAt == 5000 })
        #expect(merged.mapValues(\.local) == records.mapValues(\.local))
        // The planner writes these rows although it decides nothing new for them.
        #expect(requeued == Set(records.keys))
    }

    /// Found by the several-devices simulation: a run planned a download the remote side
    /// wins (created on both sides, policy `remote`) and stopped before the job; the file
    /// was edited again. The next plan is the same job, so the row was not written, and the
    /// job ran with the local version it was first planned with: "the local file changed
    /// while the remote version was downloading", on every run from then on.
    @Test("a job of an interrupted run whose local file changed again is written with the new local version")
    func pendingJobRescanned() throws {
        var row = FileRecord(pairId: 3, path: "notes/a.txt", queue: "media", status: .localOnly, updatedAt: 1000)
        row.local = LocalVersion(size: 27, modifiedNanos: Self.t0, inode: 5)
        row.remote = RemoteVersion(size: 27, modifiedNanos: Self.t0 - 9, etag: "\"2\"")
        row.plan(.download)
        row.moveTarget = "20260101-120000/notes/a.txt"
        // Edited to another size: one of the remote's size would be compared first
        // (`Planner.mayBeUnrecordedTransfer`), as the job's own unrecorded download.
        let edited = try Self.entry("notes/a.txt", size: 31, modified: Self.t0 + 7, inode: 5)
        let (merged, requeued) = ScanReconciler.reconcile(records: [row.path: row], scan: Self.scan([edited]), pairId: 3,
                                                          classifier: Self.classifier, now: 2000, queuesCurrent: true)
        #expect(requeued == [row.path])
        let options = PlanOptions(mode: .sync, forceDeletes: true,
                                  sync: SyncPlanSettings(conflicts: ConflictPolicies(folder: .init(fallback: .remote)),
                                                         host: "laptop", stamp: "20260101-130000"))
        let plan = Planner.planPart(pairId: 3, records: merged, remote: [row.path: try #require(row.remote)], options: options,
                                    classifier: Self.classifier, now: 2000, requeued: requeued)
        #expect(plan.jobs.map(\.action) == [.download])
        #expect(plan.changedRecords.map(\.local) == [edited.version], "the journal learns the version the job replaces")

        // A file that vanished since: written too, without its local version.
        let (gone, goneRows) = ScanReconciler.reconcile(records: [row.path: row], scan: Self.scan([]), pairId: 3,
                                                        classifier: Self.classifier, now: 2000, queuesCurrent: true)
        #expect(goneRows == [row.path] && gone[row.path]?.local == nil)
    }

    @Test("under the rules the rows were classified by, only new and changed files are classified again")
    func queuesCurrent() throws {
        var (records, entries) = try Self.baseline()
        // Rows that say another queue than the rules would give: left alone while unchanged.
        for path in records.keys { records[path]?.queue = "kept" }
        entries[0] = try Self.entry("DCIM/IMG_0001.JPG", size: 5_000_001, modified: Self.t0 + 9)
        entries.append(try Self.entry("GPS/new.gpx", size: 100))
        let merged = ScanReconciler.reconcile(records: records, scan: Self.scan(entries), pairId: 3,
                                              classifier: Self.classifier, now: 5000, queuesCurrent: true).merged
        #expect(merged["DCIM/IMG_0001.JPG"]?.queue == "media")
        #expect(merged["GPS/new.gpx"]?.queue == "gpx")
        #expect(merged["DCIM/.thumbnails/IMG_0001.JPG"] == records["DCIM/.thumbnails/IMG_0001.JPG"])
        #expect(merged["GPS/track.gpx"] == records["GPS/track.gpx"])
        #expect(merged["old.zip"] == records["old.zip"])
    }

    @Test("a vanished file keeps its record, without a local view")
    func vanished() throws {
        var (records, entries) = try Self.baseline()
        var known = try #require(records["old.zip"])
        known.localHash = "h"
        known.syncedLocal = known.local
        records["old.zip"] = known
        entries.removeLast()
        let merged = Self.reconcile(records, entries, now: 5000)
        #expect(merged.count == 4)
        let record = try #require(merged["old.zip"])
        #expect(record.local == nil)
        #expect(record.localSize == nil)
        #expect(record.localModifiedNanos == nil)
        #expect(record.localInode == nil)
        #expect(record.localHash == nil)
        #expect(record.updatedAt == 5000)
        #expect(record.syncedLocal == records["old.zip"]?.syncedLocal)
        #expect(record.queue == "archives")
    }

    @Test("a record that already had no local view is left alone")
    func remoteOnlyRecordUntouched() throws {
        var record = FileRecord(pairId: 3, path: "remote-only.jpg", queue: "media", status: .needsDownload, updatedAt: 10)
        record.remote = RemoteVersion(size: 1, modifiedNanos: nil, etag: "e")
        let merged = Self.reconcile(["remote-only.jpg": record], [], now: 5000)
        #expect(merged == ["remote-only.jpg": record])
    }

    @Test("an empty scan of an empty journal is empty")
    func empty() {
        #expect(Self.reconcile([:], []).isEmpty)
    }

    @Test("everything vanished")
    func allVanished() throws {
        let (records, _) = try Self.baseline()
        let merged = Self.reconcile(records, [], now: 5000)
        #expect(merged.count == records.count)
        #expect(merged.values.allSatisfy { $0.local == nil && $0.updatedAt == 5000 })
    }
}
