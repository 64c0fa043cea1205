import FerryTestSupport
import Foundation
import Testing

/// The local cache budget (`local_limit:`) end to end: the `ferry` binary, real folders and
/// nginx's WebDAV.
@Suite("cache budget: pull and sync folders on WebDAV", .integration)
struct CacheBudgetTests {
    static func config(_ server: TestServer, mode: String, limit: String) -> String {
        """
        remotes:
          nas:
            type: webdav
            url: \(server.url("/dav/library"))
        folders:
          library:
            path: lib
            remote: nas
            mode: \(mode)
            local_limit: \(limit)
            hidden_names: ignore
        """
    }

    static func write(_ work: Workspace, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
    }

    func run(_ work: Workspace, _ arguments: [String]) async throws -> FerryProcess.Result {
        try await work.ferry(arguments + ["--state", work.state, "--json"])
    }

    func names(_ root: String) throws -> Set<String> {
        Set(try TreeComparison.files(in: root).keys)
    }

    /// The remote's files without Ferry's hidden ones (its catalog, the trash).
    func visible(_ root: String) throws -> Set<String> {
        try names(root).filter { !$0.hasPrefix(".") }
    }

    @Test("a pull keeps the newest files within the budget, never fetches evicted ones again, and fetches on demand")
    func pullBudget() async throws {
        let work = Workspace()
        let server = try await TestServer(.nginx)
        let remote = server.directory + "/root/library"
        // Five photos, IMG_0 the oldest, and a thumbnail older than all of them (kept by rule).
        for index in 0..<5 {
            try TreeGenerator.write(at: remote + "/2024/IMG_\(index).jpg", size: 1000, seed: UInt64(index),
                                    modified: 1_700_000_000 + Double(index) * 100)
        }
        try TreeGenerator.write(at: remote + "/thumbnails/IMG_0_thumb.jpg", size: 50, seed: 9, modified: 1_600_000_000)
        let local = work.directory.child("lib")
        // A file only this side has, older than everything: not Ferry's to count or evict.
        try TreeGenerator.write(at: local + "/notes.txt", size: 10, seed: 8, modified: 1_500_000_000)
        try Self.write(work, Self.config(server, mode: "pull", limit: "{ max_files: 4, keep_queues: [thumbnails] }"))

        let first = try await run(work, ["pull", "library"])
        #expect(first.status == 0, "\(first.diagnostics)")
        // The newest that fit are fetched; the rest is left on the remote, never fetched
        // only to be evicted (CacheBudgetAdmissionTests).
        #expect(first.int("downloaded") == 4 && first.int("left_remote") == 2 && first.int("evicted") == nil, "\(first.diagnostics)")
        #expect(try names(local) == ["notes.txt", "thumbnails/IMG_0_thumb.jpg", "2024/IMG_2.jpg", "2024/IMG_3.jpg", "2024/IMG_4.jpg"])
        let left = Set(first.events(named: "skipped").compactMap { $0["path"] as? String })
        #expect(left == ["2024/IMG_0.jpg", "2024/IMG_1.jpg"])

        let status = try await run(work, ["status", "library"])
        let folder = try #require(((try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any])?["folders"]
            as? [[String: Any]])?.first, "\(status.diagnostics)")
        let cache = try #require(folder["cache"] as? [String: Any])
        #expect(cache["local_files"] as? Int == 4 && cache["remote_only_files"] as? Int == 2)
        #expect(cache["remote_only_bytes"] as? Int == 2000 && cache["max_files"] as? Int == 4)
        let text = try await work.ferry(["status", "library", "--state", work.state])
        #expect(text.standardOutput.contains("cache: 4 files local"), "\(text.diagnostics)")
        #expect(text.standardOutput.contains("2 remote only (") && text.standardOutput.contains("limit 4 files"), "\(text.diagnostics)")

        // The next pull does not bring them back.
        let again = try await run(work, ["pull", "library"])
        #expect(again.status == 0 && again.int("downloaded") == 0 && again.int("evicted") == nil, "\(again.diagnostics)")
        #expect(try names(local).count == 5)

        // On demand: IMG_0 comes back and counts as the newest, so IMG_2 (now the oldest) goes.
        let fetched = try await run(work, ["pull", "library", "2024/IMG_0.jpg"])
        #expect(fetched.status == 0 && fetched.int("downloaded") == 1 && fetched.int("evicted") == 1, "\(fetched.diagnostics)")
        #expect(try names(local) == ["notes.txt", "thumbnails/IMG_0_thumb.jpg", "2024/IMG_0.jpg", "2024/IMG_3.jpg", "2024/IMG_4.jpg"])
        #expect(try TreeComparison.files(in: local)["2024/IMG_0.jpg"] == TreeComparison.files(in: remote)["2024/IMG_0.jpg"])

        // A path that names nothing: one line, exit 2.
        let unknown = try await run(work, ["pull", "library", "2024/IMG_9.jpg"])
        #expect(unknown.status == 2 && unknown.standardError.contains("no file at 2024/IMG_9.jpg"), "\(unknown.diagnostics)")
        // The remote never lost a file.
        #expect(try visible(remote).count == 6)
    }

    @Test("a sync never takes an evicted file for a local deletion: the remote keeps it, and real deletions still go")
    func syncBudgetIsNotDeletion() async throws {
        let work = Workspace()
        let server = try await TestServer(.nginx)
        let remote = server.directory + "/root/library"
        try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: true)
        let local = work.directory.child("lib")
        for index in 0..<4 {
            try TreeGenerator.write(at: local + "/IMG_\(index).jpg", size: 2000, seed: UInt64(index),
                                    modified: 1_700_000_000 + Double(index) * 100)
        }
        try Self.write(work, Self.config(server, mode: "sync", limit: "{ max_size: 5k }"))

        let first = try await run(work, ["sync", "library"])
        #expect(first.status == 0, "\(first.diagnostics)")
        #expect(first.int("uploaded") == 4 && first.int("evicted") == 2, "\(first.diagnostics)")
        #expect(try names(local) == ["IMG_2.jpg", "IMG_3.jpg"])
        #expect(try visible(remote) == ["IMG_0.jpg", "IMG_1.jpg", "IMG_2.jpg", "IMG_3.jpg"])

        // Again and again: nothing deleted anywhere, nothing fetched back.
        for _ in 0..<2 {
            let again = try await run(work, ["sync", "library"])
            #expect(again.status == 0 && again.int("deleted") == 0 && again.int("downloaded") == 0, "\(again.diagnostics)")
            #expect(try visible(remote).count == 4)
        }

        // A file deleted by a person is still a deletion (into the remote trash).
        try FileManager.default.removeItem(atPath: local + "/IMG_3.jpg")
        let deleted = try await run(work, ["sync", "library"])
        #expect(deleted.status == 0 && deleted.int("deleted") == 1, "\(deleted.diagnostics)")
        #expect(try visible(remote) == ["IMG_0.jpg", "IMG_1.jpg", "IMG_2.jpg"])

        // A remote change to an evicted file stays on the remote until asked for.
        try TreeGenerator.write(at: remote + "/IMG_0.jpg", size: 2100, seed: 77, modified: 1_700_900_000)
        let changed = try await run(work, ["sync", "library"])
        #expect(changed.status == 0 && changed.int("downloaded") == 0 && changed.int("uploaded") == 0, "\(changed.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: local + "/IMG_0.jpg"))
    }

    @Test("an edit in place that keeps size and modification time is never evicted, and the next push sends it")
    func editInPlaceSurvivesEviction() async throws {
        let work = Workspace()
        let remote = work.directory.child("remote")
        let local = work.directory.child("lib")
        try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: true)
        for index in 0..<3 {
            try TreeGenerator.write(at: local + "/IMG_\(index).jpg", size: 2000, seed: UInt64(index),
                                    modified: 1_700_000_000 + Double(index) * 100)
        }
        func config(limit: Int) -> String {
            """
            remotes:
              disk:
                type: local
                path: remote
            folders:
              library:
                path: lib
                remote: disk
                mode: sync
                local_limit: { max_files: \(limit) }
            """
        }
        try Self.write(work, config(limit: 3))
        let first = try await run(work, ["sync", "library"])
        #expect(first.status == 0 && first.int("uploaded") == 3 && first.int("evicted") == nil, "\(first.diagnostics)")

        // IMG_0, the oldest, is edited in place: new bytes of the same size, and its time
        // put back, as `touch -r` does after an edit. Only its status-change time moved.
        let edited = local + "/IMG_0.jpg"
        let newBytes = Data(repeating: 0x45, count: 2000)
        let handle = try #require(FileHandle(forWritingAtPath: edited))
        try handle.write(contentsOf: newBytes)
        try handle.close()
        try TreeGenerator.setModificationTime(edited, seconds: 1_700_000_000)

        // The budget shrinks: IMG_0 would be the first to go. It stays, with its edit.
        try Self.write(work, config(limit: 2))
        let second = try await run(work, ["sync", "library"])
        #expect(second.status == 0 && second.int("evicted") == nil, "\(second.diagnostics)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: edited)) == newBytes)
        #expect(second.events(named: "skipped").contains { ($0["path"] as? String) == "IMG_0.jpg" }, "\(second.diagnostics)")

        // The next push compares the two copies and sends the edit.
        let push = try await run(work, ["push", "library"])
        #expect(push.status == 0 && push.int("uploaded") == 1, "\(push.diagnostics)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: remote + "/IMG_0.jpg")) == newBytes)
    }
}
