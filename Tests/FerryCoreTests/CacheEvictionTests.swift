@testable import FerryJournal
import FerryConfig
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Testing
@testable import FerryCore
@testable import FerryEngine
@testable import FerryPlanning

/// The eviction step on a real folder and journal: what it removes, what it leaves, and
/// what it records.
@Suite("cache budget: the eviction step")
struct CacheEvictionTests {
    struct Setup {
        let folder = TemporaryDirectory("ferry-cache")
        let journal: Journal
        let pairId: Int64
        var root: String { folder.child("lib") }

        init() async throws {
            try FileManager.default.createDirectory(atPath: folder.child("lib"), withIntermediateDirectories: true)
            journal = try await StateFolder(directory: folder.path).journal()
            pairId = try await journal.folderPair(name: "lib", localRoot: folder.child("lib"), remoteLocation: "r", at: 0).id ?? 0
        }

        /// A file on disk, recorded in sync with a remote copy (or in `status` otherwise), with
        /// its status-change time as a transfer records it (unless `changeTimeKnown` is false,
        /// as in rows written before it was kept).
        func file(_ path: String, size: Int, modified: Double, queue: String = "media", inSync: Bool = true,
                  changeTimeKnown: Bool = true) async throws {
            try TreeGenerator.write(at: root + "/" + path, size: size, seed: UInt64(size), modified: modified)
            let metadata = try #require(try LocalFileSystem.metadata(root + "/" + path))
            let local = LocalVersion(size: metadata.size, modifiedNanos: metadata.modifiedNanos, inode: Int64(metadata.inode))
            var record = FileRecord(pairId: pairId, path: path, queue: queue, status: .localOnly, updatedAt: 1)
            if inSync {
                record.markInSync(local: local, remote: RemoteVersion(size: local.size, modifiedNanos: local.modifiedNanos, etag: nil),
                                  at: 1, localChangedNanos: changeTimeKnown ? metadata.changedNanos : nil)
            } else {
                record.local = local
                record.plan(.upload)
            }
            try await journal.applyPlan([record])
        }

        func evict(_ limit: LocalLimit) async throws -> CacheEviction.Result {
            try await CacheEviction(limit: limit, journal: journal, pairId: pairId, folder: try AnchoredFolder(root),
                                    sink: DiscardingEventSink()).run(now: 100)
        }

        func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: root + "/" + path) }
    }

    @Test("the oldest in-sync files go and are recorded remoteOnly; a pending upload and a kept queue stay")
    func evictsOldest() async throws {
        let setup = try await Setup()
        try await setup.file("old.jpg", size: 100, modified: 1_000)
        try await setup.file("thumb.jpg", size: 100, modified: 500, queue: "thumbnails")
        try await setup.file("new-upload.jpg", size: 100, modified: 200, inSync: false)
        try await setup.file("mid.jpg", size: 100, modified: 2_000)
        try await setup.file("new.jpg", size: 100, modified: 3_000)
        let result = try await setup.evict(LocalLimit(maxFiles: 3, keepQueues: ["thumbnails"]))
        #expect(result == CacheEviction.Result(files: 2, bytes: 200, stillOver: false))
        #expect(!setup.exists("old.jpg") && !setup.exists("mid.jpg"))
        #expect(setup.exists("thumb.jpg") && setup.exists("new-upload.jpg") && setup.exists("new.jpg"))
        let old = try #require(try await setup.journal.record(pairId: setup.pairId, path: "old.jpg"))
        #expect(old.status == .remoteOnly && old.local == nil && old.syncedLocal != nil)
        let totals = try await setup.journal.cacheTotals(pairId: setup.pairId)
        #expect(totals.localFiles == 3 && totals.remoteOnlyFiles == 2 && totals.remoteOnlyBytes == 200)
    }

    @Test("least-recently-used goes by access time; a file fetched on demand counts from its fetch")
    func leastRecentlyUsed() async throws {
        let setup = try await Setup()
        // Setting an access time by hand moves the status-change time, which a read never
        // does: these rows are recorded without one.
        try await setup.file("read-long-ago.jpg", size: 100, modified: 3_000, changeTimeKnown: false)
        try await setup.file("read-lately.jpg", size: 100, modified: 1_000, changeTimeKnown: false)
        try await setup.file("fetched.jpg", size: 100, modified: 500, changeTimeKnown: false)
        // Access times: the newest file was last read long ago, the oldest one lately.
        try Self.setAccessTime(setup.root + "/read-long-ago.jpg", seconds: 4_000)
        try Self.setAccessTime(setup.root + "/read-lately.jpg", seconds: 9_000)
        try Self.setAccessTime(setup.root + "/fetched.jpg", seconds: 600)
        var fetched = try #require(try await setup.journal.record(pairId: setup.pairId, path: "fetched.jpg"))
        fetched.fetchedAt = 10_000
        try await setup.journal.applyPlan([fetched])
        let result = try await setup.evict(LocalLimit(maxFiles: 2, order: .leastRecentlyUsed))
        #expect(result.files == 1)
        #expect(!setup.exists("read-long-ago.jpg") && setup.exists("read-lately.jpg") && setup.exists("fetched.jpg"))
    }

    /// Sets a file's access time, leaving its modification time alone.
    static func setAccessTime(_ path: String, seconds: Int) throws {
        // UTIME_OMIT (a macro Swift does not import) leaves the modification time alone.
        let omit = (1 << 30) - 2
        let times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: 0, tv_nsec: omit)]
        guard utimensat(AT_FDCWD, path, times, 0) == 0 else { throw POSIXError(.EIO) }
    }

    @Test("a file changed since the scan is not evicted: it may not be on the remote any more")
    func changedFileStays() async throws {
        let setup = try await Setup()
        try await setup.file("a.jpg", size: 100, modified: 1_000)
        try await setup.file("b.jpg", size: 100, modified: 2_000)
        try TreeGenerator.write(at: setup.root + "/a.jpg", size: 150, seed: 3, modified: 1_500)
        let result = try await setup.evict(LocalLimit(maxFiles: 1))
        #expect(result.files == 0 && result.stillOver)
        #expect(setup.exists("a.jpg") && setup.exists("b.jpg"))
        #expect(try await setup.journal.record(pairId: setup.pairId, path: "a.jpg")?.status == .inSync)
    }

    @Test("an edit in place that keeps size and modification time is not evicted; the next run compares it")
    func editInPlaceStays() async throws {
        let setup = try await Setup()
        try await setup.file("a.jpg", size: 100, modified: 1_000)
        try await setup.file("b.jpg", size: 100, modified: 2_000)
        // New bytes over the old ones, then the time set back (`touch -r`): only the
        // status-change time tells.
        let path = setup.root + "/a.jpg"
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: Data(repeating: 0x45, count: 100))
        try handle.close()
        try TreeGenerator.setModificationTime(path, seconds: 1_000)
        let result = try await setup.evict(LocalLimit(maxFiles: 1))
        #expect(result.files == 0 && result.stillOver)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: 0x45, count: 100))
        let record = try #require(try await setup.journal.record(pairId: setup.pairId, path: "a.jpg"))
        // No longer vouched for: not a candidate again, and the planner takes it for a change
        // (compared with the remote copy first where the two look alike).
        #expect(record.status == .needsUpload && record.syncedLocal == nil && record.syncedRemote != nil)
        #expect(SideChange.local(of: record) == .changed && SideChange.remote(of: record) == .unchanged)
    }

    @Test("a file whose status-change time was never recorded is evicted on size, time and inode as before")
    func unknownChangeTime() async throws {
        let setup = try await Setup()
        try await setup.file("a.jpg", size: 100, modified: 1_000, changeTimeKnown: false)
        try await setup.file("b.jpg", size: 100, modified: 2_000)
        let result = try await setup.evict(LocalLimit(maxFiles: 1))
        #expect(result.files == 1 && !setup.exists("a.jpg"))
    }

    @Test("the look before removal, as a table: size, time, inode and status-change time against the synced version",
          arguments: [
              // (size, modified, inode, changed) now, against 100 bytes, time 5, inode 7, ctime 9
              (100, 5, 7, 9, Int64?(9), EvictionChoice.FileCheck.asSynced),
              (101, 5, 7, 9, 9, .changed),
              (100, 6, 7, 9, 9, .changed),
              (100, 5, 8, 9, 9, .mayBeEdited),
              (100, 5, 7, 10, 9, .mayBeEdited),
              (100, 5, 7, 10, nil, .asSynced),
              (100, 5, 8, 9, nil, .mayBeEdited),
          ])
    func checkTable(_ size: Int64, _ modified: Int64, _ inode: UInt64, _ changed: Int64, _ syncedChanged: Int64?,
                    _ expected: EvictionChoice.FileCheck) {
        let now = FileMetadata(kind: .file, size: size, modifiedNanos: modified, inode: inode, device: 1, permissions: 0o644,
                               changedNanos: changed)
        #expect(EvictionChoice.check(now, synced: LocalVersion(size: 100, modifiedNanos: 5, inode: 7),
                                     syncedChangedNanos: syncedChanged) == expected)
    }

    @Test("a symbolic link planted for a folder is never followed: the file behind it stays")
    func plantedLink() async throws {
        let setup = try await Setup()
        try await setup.file("sub/a.jpg", size: 100, modified: 1_000)
        try await setup.file("b.jpg", size: 100, modified: 2_000)
        // The folder is swapped for a link to a folder holding a file of the same name.
        let elsewhere = setup.folder.child("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: setup.root + "/sub/a.jpg", toPath: elsewhere + "/a.jpg")
        try FileManager.default.removeItem(atPath: setup.root + "/sub")
        try FileManager.default.createSymbolicLink(atPath: setup.root + "/sub", withDestinationPath: elsewhere)
        let result = try await setup.evict(LocalLimit(maxFiles: 1))
        #expect(result.files == 0)
        #expect(FileManager.default.fileExists(atPath: elsewhere + "/a.jpg"))
    }
}

/// `ferry pull FOLDER PATH…` in the journal: which rows a path names.
@Suite("cache budget: fetch on demand in the journal")
struct FetchRequestTests {
    @Test("a path names itself and what is below it, with its exact case; only evicted files are asked for")
    func request() async throws {
        let setup = try await CacheEvictionTests.Setup()
        for (path, modified) in [("Summer/a.jpg", 1_000.0), ("summer/b.jpg", 2_000.0), ("Summer2/c.jpg", 3_000.0),
                                 ("Summer/kept.jpg", 4_000.0)] {
            try await setup.file(path, size: 100, modified: modified)
        }
        _ = try await setup.evict(LocalLimit(maxFiles: 1))
        let asked = try await setup.journal.requestFetch(pairId: setup.pairId, paths: ["Summer", "nothing"], at: 50)
        #expect(asked.requested == ["Summer/a.jpg"])
        #expect(asked.alreadyLocal == 1 && asked.unknown == ["nothing"])
        let record = try #require(try await setup.journal.record(pairId: setup.pairId, path: "Summer/a.jpg"))
        #expect(record.status == .needsDownload && record.fetchedAt == 50)
        let all = try await setup.journal.requestFetch(pairId: setup.pairId, paths: [""], at: 60)
        #expect(all.requested == ["Summer2/c.jpg", "summer/b.jpg"])
    }
}
