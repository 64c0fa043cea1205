import Testing
@testable import FerryCore
@testable import FerryPlanning
import FerryPluginAPI

@Suite("Planner")
struct PlannerTests {
    static let classifier: QueueClassifier = {
        do {
            return try QueueClassifier(rules: QueueRule.standard, defaultQueue: "media")
        } catch {
            fatalError("the standard queue rules must compile: \(error)")
        }
    }()

    /// A whole second, in nanoseconds since 1970 (2023-11-14).
    static let t0: Int64 = 1_700_000_000_000_000_000
    static let second: Int64 = 1_000_000_000
    static let earlier = 1000.0
    static let now = 2000.0

    // MARK: Builders

    static func local(_ size: Int64, _ modified: Int64 = t0, inode: Int64 = 7) -> LocalVersion {
        LocalVersion(size: size, modifiedNanos: modified, inode: inode)
    }

    static func remote(_ size: Int64, _ modified: Int64? = t0, etag: String? = nil) -> RemoteVersion {
        RemoteVersion(size: size, modifiedNanos: modified, etag: etag)
    }

    static func entry(_ path: String, _ version: RemoteVersion) throws -> RemoteEntry {
        RemoteEntry(path: try RelativePath(path), kind: .file, size: version.size,
                    modifiedNanos: version.modifiedNanos, etag: version.etag)
    }

    static func record(
        _ path: String, status: FileStatus = .localOnly, local: LocalVersion? = nil, remote: RemoteVersion? = nil,
        syncedLocal: LocalVersion? = nil, syncedRemote: RemoteVersion? = nil, queue: String? = nil
    ) -> FileRecord {
        let size = local?.size ?? remote?.size ?? 0
        var record = FileRecord(
            pairId: 1, path: path, queue: queue ?? classifier.queue(forPath: path, size: size),
            status: status, updatedAt: earlier)
        record.local = local
        record.remote = remote
        record.syncedLocal = syncedLocal
        record.syncedRemote = syncedRemote
        if syncedLocal != nil || syncedRemote != nil { record.syncedAt = earlier }
        return record
    }

    /// A file last synced as `local`/`remote`, and still the same on both sides.
    static func synced(_ path: String, size: Int64 = 100) -> FileRecord {
        record(path, status: .inSync, local: local(size), remote: remote(size),
               syncedLocal: local(size), syncedRemote: remote(size))
    }

    static func plan(
        _ records: [FileRecord], remote: [RemoteEntry], _ options: PlanOptions
    ) throws(PlanError) -> Plan {
        try Planner.plan(
            pairId: 1,
            records: Dictionary(uniqueKeysWithValues: records.map { ($0.path, $0) }),
            remote: Dictionary(uniqueKeysWithValues: remote.map { ($0.path.string, $0) }),
            options: options, classifier: classifier, now: now)
    }

    static let push = PlanOptions(mode: .push)
    static let pull = PlanOptions(mode: .pull)
    static let pushMirror = PlanOptions(mode: .push, mirror: true)
    static let pullMirror = PlanOptions(mode: .pull, mirror: true)

    // MARK: Push

    @Test("push: a new local file is uploaded")
    func pushNewFile() throws {
        let input = Self.record("DCIM/IMG_0001.JPG", local: Self.local(4000))
        let plan = try Self.plan([input], remote: [], Self.push)
        let job = try #require(plan.jobs.first)
        #expect(plan.jobs.count == 1)
        #expect(job.path == "DCIM/IMG_0001.JPG")
        #expect(job.status == .needsUpload)
        #expect(job.action == .upload)
        #expect(job.queue == "media")
        #expect(job.attempts == 0)
        #expect(plan.changedRecords.map(\.path) == [job.path])
        #expect(plan.changedRecords.first?.status == .needsUpload)
        #expect(plan.changedRecords.first?.updatedAt == Self.now)
        #expect(plan.uploadCount == 1)
        #expect(plan.uploadBytes == 4000)
        #expect(plan.downloadCount == 0)
        #expect(plan.deletionCount == 0)
        #expect(plan.unchangedCount == 0)
        #expect(plan.adoptedCount == 0)
        #expect(plan.conflicts.isEmpty)
        #expect(plan.forgottenPaths.isEmpty)
    }

    @Test("push: a file unchanged since the last sync needs nothing and no write")
    func pushUnchanged() throws {
        let input = Self.synced("a.jpg")
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(100))], Self.push)
        #expect(plan.jobs.isEmpty)
        #expect(plan.unchangedCount == 1)
        #expect(plan.changedRecords.isEmpty)
        #expect(plan.conflicts.isEmpty)
        #expect(plan.adoptedCount == 0)
    }

    @Test("push: an in-sync file whose remote view is refreshed is written, still in sync")
    func pushUnchangedNewRemoteView() throws {
        var input = Self.synced("a.jpg")
        input.remote = nil
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(100))], Self.push)
        #expect(plan.jobs.isEmpty)
        #expect(plan.unchangedCount == 1)
        let written = try #require(plan.changedRecords.first)
        #expect(written.status == .inSync)
        #expect(written.remote == Self.remote(100))
        #expect(written.updatedAt == Self.now)
    }

    @Test("push: an in-sync file with a stale failure is cleaned up")
    func pushUnchangedClearsFailure() throws {
        var input = Self.synced("a.jpg")
        input.attempts = 3
        input.lastError = "timeout"
        input.nextAttemptAt = 1500
        input.transferLocal = Self.local(100)
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(100))], Self.push)
        let written = try #require(plan.changedRecords.first)
        #expect(written.attempts == 0)
        #expect(written.lastError == nil)
        #expect(written.nextAttemptAt == nil)
        #expect(written.transferLocal == nil)
        #expect(written.status == .inSync)
    }

    @Test("push: a look-alike remote copy without journal state is compared by content, not adopted on size and time")
    func pushComparesLookAlike() throws {
        let input = Self.record("a.jpg", local: Self.local(100, Self.t0 + 5))
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(100, Self.t0 + 5, etag: "e1"))], Self.push)
        #expect(plan.jobs.map(\.action) == [.compareContent])
        #expect(plan.adoptedCount == 0)
        let written = try #require(plan.changedRecords.first)
        #expect(written.syncedLocal == nil && written.syncedRemote == nil, "nothing is vouched for before the compare")
    }

    @Test("push: a remote that keeps whole seconds looks alike within that second, so it is compared", arguments: [
        Int64(0), Int64(1), Int64(123_456_789), Int64(999_999_999),
    ])
    func pushLookAlikeWholeSeconds(nanos: Int64) throws {
        let input = Self.record("a.jpg", local: Self.local(100, Self.t0 + nanos))
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(100, Self.t0))], Self.push)
        #expect(plan.jobs.map(\.action) == [.compareContent])
    }

    @Test("push: whole-second matching floors negative (pre-1970) times")
    func pushLookAlikeNegativeTimes() throws {
        let input = Self.record("old.jpg", local: Self.local(100, -1_500_000_000))
        let plan = try Self.plan([input], remote: [try Self.entry("old.jpg", Self.remote(100, -2_000_000_000))], Self.push)
        #expect(plan.jobs.map(\.action) == [.compareContent])
        let other = try Self.plan([input], remote: [try Self.entry("old.jpg", Self.remote(100, -1_000_000_000))], Self.push)
        #expect(other.adoptedCount == 0)
        #expect(other.uploadCount == 1)
    }

    @Test("an interrupted transfer of exactly these versions is adopted without a compare: its bytes are Ferry's own",
          arguments: [FileStatus.uploading, .downloading])
    func interruptedTransferAdopted(_ status: FileStatus) throws {
        var input = Self.record("a.jpg", local: Self.local(100, Self.t0 + 5))
        let remote = Self.remote(100, Self.t0 + 5)
        input.remote = remote
        if status == .uploading {
            input.beginUpload(of: Self.local(100, Self.t0 + 5), at: Self.now)
        } else {
            input.beginDownload(of: remote, at: Self.now)
        }
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", remote)], status == .uploading ? Self.push : Self.pull)
        #expect(plan.adoptedCount == 1)
        #expect(plan.jobs.isEmpty)
    }

    @Test("look-alike copies whose bytes differ: push uploads, pull downloads, as if their times had differed")
    func differingLookAlikes() throws {
        let record = Self.record("a.jpg", local: Self.local(100, Self.t0 + 5))
        var both = record
        both.remote = Self.remote(100, Self.t0 + 5)
        #expect(Planner.decideDiffering(both, options: Self.push, reason: nil) == .transfer(.upload))
        #expect(Planner.decideDiffering(both, options: Self.pull, reason: nil) == .transfer(.download))
    }

    @Test("push: a remote copy that differs is not adopted", arguments: [
        ("other second", RemoteVersion(size: 100, modifiedNanos: 1_700_000_001_000_000_000, etag: nil)),
        ("other nanos", RemoteVersion(size: 100, modifiedNanos: 1_700_000_000_000_000_007, etag: nil)),
        ("other size", RemoteVersion(size: 101, modifiedNanos: 1_700_000_000_000_000_000, etag: nil)),
        ("no time", RemoteVersion(size: 100, modifiedNanos: nil, etag: "e")),
    ])
    func pushNoAdopt(label: String, remote: RemoteVersion) throws {
        let input = Self.record("a.jpg", local: Self.local(100, Self.t0 + 123))
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", remote)], Self.push)
        #expect(plan.adoptedCount == 0, "\(label)")
        #expect(plan.jobs.map(\.action) == [.upload], "\(label)")
    }

    @Test("push: a local change is uploaded")
    func pushLocalChanged() throws {
        var input = Self.synced("a.jpg")
        input.local = Self.local(200, Self.t0 + 10 * Self.second)
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(100))], Self.push)
        let job = try #require(plan.jobs.first)
        #expect(job.action == .upload)
        #expect(job.status == .needsUpload)
        #expect(plan.conflicts.isEmpty)
        #expect(plan.uploadBytes == 200)
    }

    @Test("push: an inode change alone is not a change")
    func pushInodeOnly() throws {
        var input = Self.synced("a.jpg")
        input.local = Self.local(100, Self.t0, inode: 99)
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(100))], Self.push)
        #expect(plan.jobs.isEmpty)
        #expect(plan.unchangedCount == 1)
    }

    @Test("push: a remote change with the local file unchanged is a conflict")
    func pushRemoteChanged() throws {
        let input = Self.synced("a.jpg")
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(300, Self.t0 + 60 * Self.second))], Self.push)
        #expect(plan.jobs.isEmpty)
        let conflict = try #require(plan.conflicts.first)
        #expect(conflict.status == .conflict)
        #expect(conflict.action == nil)
        #expect(conflict.lastError?.contains("remote copy changed") == true)
        #expect(plan.changedRecords.map(\.status) == [.conflict])
    }

    @Test("push: changes on both sides are a conflict")
    func pushBothChanged() throws {
        var input = Self.synced("a.jpg")
        input.local = Self.local(200, Self.t0 + 10 * Self.second)
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(300, Self.t0 + 60 * Self.second))], Self.push)
        #expect(plan.jobs.isEmpty)
        let conflict = try #require(plan.conflicts.first)
        #expect(conflict.lastError?.contains("both sides") == true)
    }

    @Test("push: a remote change seen only through the ETag is a conflict")
    func pushETagChanged() throws {
        let input = Self.record("a.jpg", status: .inSync, local: Self.local(100, Self.t0 + 3),
                                remote: Self.remote(100, Self.t0 + 3, etag: "v1"),
                                syncedLocal: Self.local(100, Self.t0 + 3), syncedRemote: Self.remote(100, Self.t0 + 3, etag: "v1"))
        let same = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(100, Self.t0 + 3, etag: "v1"))], Self.push)
        #expect(same.unchangedCount == 1)
        let changed = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(100, Self.t0 + 9, etag: "v2"))], Self.push)
        #expect(changed.conflicts.count == 1)
    }

    @Test("push: a local deletion without mirror forgets the file")
    func pushLocalDeletedNoMirror() throws {
        var input = Self.synced("a.jpg")
        input.local = nil
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(100))], Self.push)
        #expect(plan.forgottenPaths == ["a.jpg"])
        #expect(plan.jobs.isEmpty)
        #expect(plan.changedRecords.isEmpty)
    }

    @Test("push: a file gone from both sides is forgotten")
    func pushGoneBothSides() throws {
        var input = Self.synced("a.jpg")
        input.local = nil
        let plan = try Self.plan([input], remote: [], Self.push)
        #expect(plan.forgottenPaths == ["a.jpg"])
        #expect(plan.jobs.isEmpty)
    }

    @Test("push: a remote-only file without mirror is left alone and not recorded")
    func pushRemoteOnlyNoMirror() throws {
        let plan = try Self.plan([], remote: [try Self.entry("extra.jpg", Self.remote(100))], Self.push)
        #expect(plan.jobs.isEmpty)
        #expect(plan.changedRecords.isEmpty)
        #expect(plan.forgottenPaths.isEmpty)
    }

    @Test("push: a file deleted on the remote is uploaded again")
    func pushRemoteDeleted() throws {
        let plan = try Self.plan([Self.synced("a.jpg")], remote: [], Self.push)
        #expect(plan.jobs.map(\.action) == [.upload])
    }

    @Test("push mirror: a local deletion deletes the remote copy")
    func pushMirrorLocalDeleted() throws {
        var gone = Self.synced("a.jpg")
        gone.local = nil
        let records = [gone, Self.synced("b.jpg"), Self.synced("c.jpg"), Self.synced("d.jpg")]
        let remote = try ["a.jpg", "b.jpg", "c.jpg", "d.jpg"].map { try Self.entry($0, Self.remote(100)) }
        let plan = try Self.plan(records, remote: remote, Self.pushMirror)
        let job = try #require(plan.jobs.first)
        #expect(plan.jobs.count == 1)
        #expect(job.path == "a.jpg")
        #expect(job.action == .deleteRemote)
        #expect(job.status == .needsUpload)
        #expect(plan.deletionCount == 1)
        #expect(plan.uploadBytes == 0)
        #expect(plan.unchangedCount == 3)
    }

    @Test("push mirror: a remote-only file is deleted, in the queue its name and size give")
    func pushMirrorRemoteOnly() throws {
        let records = [Self.synced("b.jpg"), Self.synced("c.jpg"), Self.synced("d.jpg")]
        var remote = try ["b.jpg", "c.jpg", "d.jpg"].map { try Self.entry($0, Self.remote(100)) }
        remote.append(try Self.entry("x/.thumbnails/old.jpg", Self.remote(10)))
        let plan = try Self.plan(records, remote: remote, Self.pushMirror)
        let job = try #require(plan.jobs.first)
        #expect(plan.jobs.count == 1)
        #expect(job.path == "x/.thumbnails/old.jpg")
        #expect(job.action == .deleteRemote)
        #expect(job.status == .needsUpload)
        #expect(job.queue == "thumbnails")
        #expect(job.local == nil)
        #expect(job.remote == Self.remote(10))
        #expect(plan.changedRecords.contains(job))
    }

    /// Four files on the remote; the local side lost `deleted` of them.
    static func deletionScenario(deleted: Int, mode: SyncMode) throws -> ([FileRecord], [RemoteEntry]) {
        let paths = ["a.jpg", "b.jpg", "c.jpg", "d.jpg"]
        var records: [FileRecord] = []
        var remote: [RemoteEntry] = []
        for (index, path) in paths.enumerated() {
            var record = synced(path)
            if index < deleted {
                if mode == .push { record.local = nil } else { record.remote = nil }
            }
            records.append(record)
            if mode == .pull && index < deleted { continue }
            remote.append(try entry(path, Self.remote(100)))
        }
        return (records, remote)
    }

    @Test("deletion guard: mirror deleting 3 of 4 remote files is refused")
    func pushDeletionGuard() throws {
        let (records, remote) = try Self.deletionScenario(deleted: 3, mode: .push)
        let error = try #require(throws: PlanError.self) { try Self.plan(records, remote: remote, Self.pushMirror) }
        #expect(error.message.contains("refusing to delete 3 of 4 files on the remote (limit 2)"))
        #expect(error.description == error.message)
    }

    @Test("deletion guard: deleting exactly the allowed share passes")
    func pushDeletionGuardBoundary() throws {
        let (records, remote) = try Self.deletionScenario(deleted: 2, mode: .push)
        let plan = try Self.plan(records, remote: remote, Self.pushMirror)
        #expect(plan.deletionCount == 2)
    }

    @Test("deletion guard: maxDeletes replaces the share", arguments: [(5, true), (3, true), (2, false), (0, false)])
    func pushDeletionGuardCount(maxDeletes: Int, allowed: Bool) throws {
        let (records, remote) = try Self.deletionScenario(deleted: 3, mode: .push)
        let options = PlanOptions(mode: .push, mirror: true, maxDeletes: maxDeletes)
        if allowed {
            #expect(try Self.plan(records, remote: remote, options).deletionCount == 3)
        } else {
            #expect(throws: PlanError.self) { try Self.plan(records, remote: remote, options) }
        }
    }

    @Test("deletion guard: forceDeletes allows deleting everything")
    func pushDeletionGuardForced() throws {
        let (records, remote) = try Self.deletionScenario(deleted: 4, mode: .push)
        let options = PlanOptions(mode: .push, mirror: true, forceDeletes: true)
        let plan = try Self.plan(records, remote: remote, options)
        #expect(plan.deletionCount == 4)
        #expect(plan.jobs.allSatisfy { $0.action == .deleteRemote })
    }

    @Test("deletion guard: a custom share", arguments: [(0.75, true), (0.74, false), (1.0, true), (0.0, false)])
    func deletionGuardShare(share: Double, allowed: Bool) throws {
        let (records, remote) = try Self.deletionScenario(deleted: 3, mode: .push)
        let options = PlanOptions(mode: .push, mirror: true, maxDeleteShare: share)
        if allowed {
            #expect(try Self.plan(records, remote: remote, options).deletionCount == 3)
        } else {
            #expect(throws: PlanError.self) { try Self.plan(records, remote: remote, options) }
        }
    }

    @Test("without mirror nothing is deleted, so the guard never fires")
    func noMirrorNoGuard() throws {
        let (records, remote) = try Self.deletionScenario(deleted: 4, mode: .push)
        let plan = try Self.plan(records, remote: remote, Self.push)
        #expect(plan.deletionCount == 0)
        #expect(plan.forgottenPaths.count == 4)
    }

    @Test("jobs come out by queue rank, then by path")
    func jobOrder() throws {
        let paths = ["z.gpx", "a.zip", "b.jpg", ".thumbnails/b.jpg", "a.jpg", "m.txt", "DCIM/.thumbs/a.jpg", "B.jpg", "a.gpx"]
        let records = paths.map { Self.record($0, local: Self.local(100)) }
        var legacy = Self.record("0-first-by-name.jpg", local: Self.local(100), queue: "legacy")
        legacy.keepLocalOnly()
        let plan = try Self.plan(records + [legacy], remote: [], Self.push)
        #expect(plan.jobs.map(\.path) == [
            ".thumbnails/b.jpg", "DCIM/.thumbs/a.jpg",
            "B.jpg", "a.jpg", "b.jpg", "m.txt",
            "a.gpx", "z.gpx",
            "a.zip",
            "0-first-by-name.jpg",
        ])
        #expect(plan.jobs.map(\.queue) == [
            "thumbnails", "thumbnails", "media", "media", "media", "media", "gpx", "gpx", "archives", "legacy",
        ])
    }

    @Test("a record in syncError gets a fresh job")
    func syncErrorRetried() throws {
        var input = Self.record("a.jpg", status: .syncError, local: Self.local(100))
        input.action = .upload
        input.attempts = 5
        input.lastError = "permission denied"
        input.nextAttemptAt = 1500
        let plan = try Self.plan([input], remote: [], Self.push)
        let job = try #require(plan.jobs.first)
        #expect(job.status == .needsUpload)
        #expect(job.action == .upload)
        #expect(job.attempts == 0)
        #expect(job.nextAttemptAt == nil)
        #expect(job.lastError == nil)
    }

    @Test("a pending job keeps its last error for display")
    func pendingKeepsError() throws {
        var input = Self.record("a.jpg", status: .needsUpload, local: Self.local(100))
        input.action = .upload
        input.lastError = "timeout"
        let plan = try Self.plan([input], remote: [], Self.push)
        #expect(plan.jobs.first?.lastError == "timeout")
    }

    @Test("a record in conflict that is still in conflict is not rewritten")
    func conflictStable() throws {
        let first = try Self.plan([Self.synced("a.jpg")], remote: [try Self.entry("a.jpg", Self.remote(300))], Self.push)
        let conflict = try #require(first.conflicts.first)
        let second = try Self.plan([conflict], remote: [try Self.entry("a.jpg", Self.remote(300))], Self.push)
        #expect(second.conflicts == [conflict])
        #expect(second.changedRecords.isEmpty)
    }

    @Test("planning is stable: a plan's records planned again give the same jobs and no writes")
    func idempotent() throws {
        let records = ["a.jpg", "b.gpx", ".thumbnails/c.jpg"].map { Self.record($0, local: Self.local(100)) }
        let first = try Self.plan(records, remote: [], Self.push)
        #expect(first.jobs.count == 3)
        let second = try Self.plan(first.changedRecords, remote: [], Self.push)
        #expect(second.jobs.map(\.path) == first.jobs.map(\.path))
        #expect(second.jobs.map(\.action) == first.jobs.map(\.action))
        #expect(second.changedRecords.isEmpty)
    }

    @Test(
        "jobs and conflicts are the same rows as the ones written, updatedAt included")
    func jobsMatchChangedRecords() throws {
        var conflicted = Self.synced("c.jpg")
        conflicted.local = Self.local(200, Self.t0 + Self.second)
        let records = [Self.record("a.jpg", local: Self.local(100)), conflicted]
        let plan = try Self.plan(records, remote: [try Self.entry("c.jpg", Self.remote(300))], Self.push)
        #expect(plan.jobs.count == 1)
        #expect(plan.conflicts.count == 1)
        for row in plan.jobs + plan.conflicts {
            #expect(row.updatedAt == Self.now)
            #expect(plan.changedRecords.contains(row))
        }
    }

    // MARK: Pull

    @Test("pull: a remote-only file is downloaded, classified by its remote size")
    func pullNewRemote() throws {
        let plan = try Self.plan([], remote: [
            try Self.entry("x/.thumbnails/a.jpg", Self.remote(1000)),
            try Self.entry("y/.thumbnails/big.jpg", Self.remote(5 << 20)),
        ], Self.pull)
        #expect(plan.jobs.map(\.path) == ["x/.thumbnails/a.jpg", "y/.thumbnails/big.jpg"])
        #expect(plan.jobs.map(\.queue) == ["thumbnails", "media"])
        #expect(plan.jobs.allSatisfy { $0.status == .needsDownload && $0.action == .download })
        #expect(plan.downloadCount == 2)
        #expect(plan.downloadBytes == 1000 + (5 << 20))
        #expect(plan.changedRecords.count == 2)
        #expect(plan.changedRecords.allSatisfy { $0.pairId == 1 && $0.updatedAt == Self.now })
    }

    @Test("pull: a local-only file without mirror stays localOnly, unwritten")
    func pullLocalOnly() throws {
        let input = Self.record("mine.jpg", local: Self.local(100))
        let plan = try Self.plan([input], remote: [], Self.pull)
        #expect(plan.jobs.isEmpty)
        #expect(plan.changedRecords.isEmpty)
        #expect(plan.forgottenPaths.isEmpty)
    }

    @Test("pull: a file gone from the remote without mirror becomes localOnly")
    func pullRemoteDeletedNoMirror() throws {
        var input = Self.synced("a.jpg")
        input.remote = nil
        let plan = try Self.plan([input], remote: [], Self.pull)
        #expect(plan.jobs.isEmpty)
        #expect(plan.changedRecords.map(\.status) == [.localOnly])
    }

    @Test("pull: a local deletion is downloaded again")
    func pullLocalDeleted() throws {
        var input = Self.synced("a.jpg")
        input.local = nil
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(100))], Self.pull)
        #expect(plan.jobs.map(\.action) == [.download])
    }

    @Test("pull: unchanged files need nothing")
    func pullUnchanged() throws {
        let plan = try Self.plan([Self.synced("a.jpg")], remote: [try Self.entry("a.jpg", Self.remote(100))], Self.pull)
        #expect(plan.jobs.isEmpty)
        #expect(plan.unchangedCount == 1)
        #expect(plan.changedRecords.isEmpty)
    }

    @Test("pull: a remote change with the local file unchanged is downloaded")
    func pullRemoteChanged() throws {
        let plan = try Self.plan([Self.synced("a.jpg")],
                                 remote: [try Self.entry("a.jpg", Self.remote(300, Self.t0 + 60 * Self.second))], Self.pull)
        let job = try #require(plan.jobs.first)
        #expect(job.action == .download)
        #expect(job.status == .needsDownload)
        #expect(plan.downloadBytes == 300)
        #expect(plan.conflicts.isEmpty)
    }

    @Test("pull: a look-alike local copy without journal state is compared by content")
    func pullComparesLookAlike() throws {
        let input = Self.record("a.jpg", local: Self.local(100, Self.t0 + 42))
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(100))], Self.pull)
        #expect(plan.adoptedCount == 0)
        #expect(plan.jobs.map(\.action) == [.compareContent])
    }

    @Test("pull: a local change with the remote unchanged is a conflict")
    func pullLocalChanged() throws {
        var input = Self.synced("a.jpg")
        input.local = Self.local(200, Self.t0 + 10 * Self.second)
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(100))], Self.pull)
        #expect(plan.jobs.isEmpty)
        let conflict = try #require(plan.conflicts.first)
        #expect(conflict.status == .conflict)
        #expect(conflict.lastError?.contains("local copy changed") == true)
    }

    @Test("pull: changes on both sides are a conflict")
    func pullBothChanged() throws {
        var input = Self.synced("a.jpg")
        input.local = Self.local(200, Self.t0 + 10 * Self.second)
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(300, Self.t0 + 60 * Self.second))], Self.pull)
        #expect(plan.jobs.isEmpty)
        #expect(plan.conflicts.first?.lastError?.contains("both sides") == true)
    }

    @Test("pull: a new local file beside a different remote one is overwritten by the download")
    func pullNoJournalDifferent() throws {
        let input = Self.record("a.jpg", local: Self.local(100, Self.t0 + 42 * Self.second))
        let plan = try Self.plan([input], remote: [try Self.entry("a.jpg", Self.remote(300))], Self.pull)
        #expect(plan.jobs.map(\.action) == [.download])
    }

    @Test("pull mirror: a local-only file is deleted")
    func pullMirrorLocalOnly() throws {
        let records = [Self.synced("a.jpg"), Self.synced("b.jpg"), Self.synced("c.jpg"),
                       Self.record("extra.jpg", local: Self.local(5))]
        let remote = try ["a.jpg", "b.jpg", "c.jpg"].map { try Self.entry($0, Self.remote(100)) }
        let plan = try Self.plan(records, remote: remote, Self.pullMirror)
        let job = try #require(plan.jobs.first)
        #expect(plan.jobs.count == 1)
        #expect(job.path == "extra.jpg")
        #expect(job.action == .deleteLocal)
        #expect(job.status == .needsDownload)
        #expect(plan.deletionCount == 1)
    }

    @Test("pull deletion guard counts local files")
    func pullDeletionGuard() throws {
        let (records, remote) = try Self.deletionScenario(deleted: 3, mode: .pull)
        let error = try #require(throws: PlanError.self) { try Self.plan(records, remote: remote, Self.pullMirror) }
        #expect(error.message.contains("refusing to delete 3 of 4 files on the local folder (limit 2)"))
        let forced = try Self.plan(records, remote: remote, PlanOptions(mode: .pull, mirror: true, forceDeletes: true))
        #expect(forced.jobs.map(\.action) == [.deleteLocal, .deleteLocal, .deleteLocal])
        let counted = try Self.plan(records, remote: remote, PlanOptions(mode: .pull, mirror: true, maxDeletes: 5))
        #expect(counted.deletionCount == 3)
    }

    @Test("pull: a pull never uploads and a push never downloads", arguments: [SyncMode.push, SyncMode.pull])
    func directionOnly(mode: SyncMode) throws {
        var changedLocal = Self.synced("l.jpg")
        changedLocal.local = Self.local(200, Self.t0 + Self.second)
        let records = [Self.record("new-local.jpg", local: Self.local(10)), Self.synced("s.jpg"), changedLocal]
        let remote = try [
            Self.entry("new-remote.jpg", Self.remote(20)), Self.entry("s.jpg", Self.remote(100)),
            Self.entry("l.jpg", Self.remote(100)),
        ]
        let plan = try Self.plan(records, remote: remote, PlanOptions(mode: mode))
        let actions = Set(plan.jobs.compactMap(\.action))
        switch mode {
        case .push: #expect(actions == [.upload])
        case .pull: #expect(actions == [.download])
        case .sync: Issue.record("not a one-way mode")
        }
    }
}
