import FerryConfig
import FerryJournal
import FerrySystem
import FerryTestSupport
import Foundation
import Testing
@testable import FerryCore
@testable import FerryDaemon
@testable import FerryPlanning

@Suite("media items")
struct MediaItemTests {
    @Test("files that share a stem in a folder are one item; thumbnail folders do not count", arguments: [
        ("DCIM/IMG_0001.jpg", "DCIM/IMG_0001"),
        ("DCIM/.thumbnails/IMG_0001.jpg", "DCIM/IMG_0001"),
        ("DCIM/thumbnails/IMG_0001.JPG", "DCIM/IMG_0001"),
        ("DCIM/IMG_0001.xmp", "DCIM/IMG_0001"),
        ("DCIM/IMG_0001.jpg.xmp", "DCIM/IMG_0001"),
        ("DCIM/IMG_0001_thumb.jpg", "DCIM/IMG_0001"),
        ("DCIM/IMG_0001.conflict-20261122-120000-laptop.jpg", "DCIM/IMG_0001"),
        ("other/IMG_0001.jpg", "other/IMG_0001"),
        ("track.gpx", "track"),
        (".hidden.jpg", ".hidden"),
        ("README", "README"),
    ])
    func standardGrouping(_ path: String, _ key: String) {
        #expect(ItemGrouping.standard.itemKey(forPath: path) == key)
    }

    @Test("stem up to the last dot, and custom thumbnail folders")
    func customGrouping() {
        let grouping = ItemGrouping(stem: .lastDot, thumbnailFolders: ["previews"], stemSuffixes: [])
        #expect(grouping.itemKey(forPath: "trips/day.2024.gpx") == "trips/day.2024")
        #expect(grouping.itemKey(forPath: "trips/previews/day.2024.jpg") == "trips/day.2024")
        #expect(grouping.itemKey(forPath: "trips/.thumbnails/day.2024.jpg") == "trips/.thumbnails/day.2024")
    }

    @Test("an item's status follows from its files'", arguments: [
        ([FileStatus.inSync, .inSync], MediaItemStatus.inSync),
        ([.inSync, .needsUpload], .filesPending),
        ([.inSync, .uploading, .needsUpload], .filesPending),
        ([.inSync, .needsDownload], .filesPending),
        ([.needsUpload, .needsUpload], .queued),
        ([.needsUpload, .localOnly], .queued),
        ([.localOnly], .localOnly),
        ([.inSync, .localOnly], .localOnly),
        ([.inSync, .conflict, .needsUpload], .conflict),
        ([.conflict, .syncError], .syncError),
        ([.inSync, .syncError], .syncError),
    ])
    func status(_ files: [FileStatus], _ expected: MediaItemStatus) {
        #expect(MediaItemStatus(files) == expected)
    }

    @Test("grouping files gives items in key order with their files in path order")
    func group() {
        let files = [
            MediaItem.FileState(path: "DCIM/IMG_2.jpg", status: .needsUpload, bytes: 10),
            MediaItem.FileState(path: "DCIM/IMG_1.jpg", status: .needsUpload, bytes: 1000),
            MediaItem.FileState(path: "DCIM/.thumbnails/IMG_1.jpg", status: .inSync, bytes: 20),
        ]
        let items = MediaItem.group(files, by: .standard)
        #expect(items.map(\.key) == ["DCIM/IMG_1", "DCIM/IMG_2"])
        #expect(items[0].files.map(\.path) == ["DCIM/.thumbnails/IMG_1.jpg", "DCIM/IMG_1.jpg"])
        #expect(items[0].status == .filesPending && items[0].bytes == 1020)
        #expect(items[1].status == .queued)
    }
}

@Suite("trash expiry")
struct TrashExpiryTests {
    @Test("stamps name UTC times and read back")
    func stamps() {
        #expect(TrashExpiry.stamp(at: 1_700_000_000) == "20231114-221320")
        #expect(TrashExpiry.time(ofStamp: "20231114-221320") == 1_700_000_000)
        for name in ["2023111-221320", "20231114221320", "20231114-22132x", "notes", "20231114-221320-x"] {
            #expect(TrashExpiry.time(ofStamp: name) == nil, "\(name)")
        }
    }

    @Test("run folders older than the retention expire; other names and `forever` are left alone")
    func expiry() {
        let now = TrashExpiry.time(ofStamp: "20261122-120000") ?? 0
        let names = ["20261122-110000", "20261101-120000", "20261023-115959", "keep-me", "20251122-120000"]
        #expect(TrashExpiry.expired(names, now: now, keepSeconds: 30 * 86_400) == ["20251122-120000", "20261023-115959"])
        #expect(TrashExpiry.expired(names, now: now, keepSeconds: nil) == [])
        #expect(TrashExpiry.expired(names, now: now, keepSeconds: 0) == ["20251122-120000", "20261023-115959", "20261101-120000", "20261122-110000"])
    }
}

@Suite("verification")
struct VerificationTests {
    typealias P = PlannerTests

    @Test("each kind of difference is found by metadata")
    func findings() {
        let records = [
            P.synced("same.jpg"), P.synced("local-changed.jpg"), P.synced("remote-changed.jpg"),
            P.synced("local-gone.jpg"), P.synced("remote-gone.jpg"), P.synced("stale.jpg"),
        ]
        var local: [String: LocalVersion] = [:]
        var remote: [String: RemoteVersion] = [:]
        for path in ["same.jpg", "remote-changed.jpg", "remote-gone.jpg", "local-orphan.jpg"] { local[path] = P.local(100) }
        local["local-changed.jpg"] = P.local(101)
        for path in ["same.jpg", "local-changed.jpg", "local-gone.jpg", "remote-orphan.jpg"] { remote[path] = P.remote(100) }
        remote["remote-changed.jpg"] = P.remote(100, P.t0 + P.second)
        let found = Verification.findings(records: records, local: local, remote: remote)
        #expect(found.map { "\($0.kind.rawValue) \($0.path)" } == [
            "localDiffers local-changed.jpg", "localMissing local-gone.jpg", "localOrphan local-orphan.jpg",
            "remoteDiffers remote-changed.jpg", "remoteMissing remote-gone.jpg", "remoteOrphan remote-orphan.jpg",
            "staleRow stale.jpg",
        ])

        let repair = Verification.repaired(records: records, findings: found + [
            VerificationFinding(path: "same.jpg", kind: .contentDiffers, detail: ""),
        ], local: local, remote: remote, now: P.now)
        #expect(repair.removed == ["stale.jpg"])
        let byPath = Dictionary(uniqueKeysWithValues: repair.upserts.map { ($0.path, $0) })
        #expect(byPath["local-changed.jpg"]?.local == P.local(101))
        #expect(byPath["local-changed.jpg"]?.syncedLocal == P.local(100))
        #expect(byPath["remote-gone.jpg"]?.remote == nil)
        #expect(byPath["same.jpg"]?.status == .conflict && byPath["same.jpg"]?.resolution == .keepBoth)
        #expect(byPath["same.jpg"]?.syncedLocal == nil)
    }
}

@Suite("the daemon's count of items with files pending")
struct PendingItemCountTests {
    /// More rows than one page, items whose files fall on both sides of a page's edge and
    /// in thumbnail folders: the count read a page at a time equals the one made by
    /// grouping every file at once.
    @Test("counted a page at a time, it equals grouping every file at once", arguments: [UInt64(1), 2, 3])
    func pagedCountMatchesGrouping(seed: UInt64) async throws {
        let folder = TemporaryDirectory()
        let state = StateFolder(directory: folder.path)
        let journal = try await state.journal()
        let pairId = try #require(try await journal.folderPair(name: "p", localRoot: "/l", remoteLocation: "r", at: 0).id)
        var random = SplitMix(seed: seed)
        let statuses: [FileStatus] = [.inSync, .inSync, .needsUpload, .uploading, .localOnly, .conflict, .syncError, .remoteOnly]
        var records: [FileRecord] = []
        for item in 0..<(PendingItemCount.pageSize * 2 / 3) {
            let stem = String(format: "d%02d/IMG_%05d", item % 7, item)
            let names = [stem + ".jpg", stem + ".xmp", stem.replacingOccurrences(of: "/", with: "/.thumbnails/") + ".jpg"]
            for name in names.prefix(1 + Int(random.next() % 3)) {
                let status = statuses[Int(random.next() % UInt64(statuses.count))]
                records.append(FileRecord(pairId: pairId, path: name, queue: "media", status: status, updatedAt: 1))
            }
        }
        try await journal.applyPlan(records)
        #expect(records.count > PendingItemCount.pageSize)

        let files = records.map { MediaItem.FileState(path: $0.path, status: $0.status, bytes: 0) }
        let expected = MediaItem.group(files, by: .standard).count { $0.status == .filesPending }
        let counted = await PendingItemCount(state: state, grouping: .standard, clock: SystemClock()).current()
        #expect(expected > 0)
        #expect(counted == expected)
    }
}
