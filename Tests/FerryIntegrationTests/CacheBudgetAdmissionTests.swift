import FerryTestSupport
import Foundation
import Testing

/// The cache budget never undoes what the user asked for (issue 51, point 3): a first pull
/// under a budget fetches the newest files that fit instead of the whole library, and a file
/// fetched on demand is not evicted by the run that fetched it (or is refused before any
/// download when the budget could never hold it). The binary, nginx, bytes on disk.
@Suite("cache budget: what fits is fetched, what was asked for stays", .integration)
struct CacheBudgetAdmissionTests {
    static let kib = 1024

    private func setUp(_ server: TestServer, limit: String) throws -> Workspace {
        let work = Workspace()
        let config = """
            remotes:
              nas:
                type: webdav
                url: \(server.url("/dav/library"))
            folders:
              library:
                path: lib
                remote: nas
                mode: pull
                local_limit: \(limit)
                hidden_names: ignore
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        return work
    }

    private func run(_ work: Workspace, _ arguments: [String]) async throws -> FerryProcess.Result {
        try await work.ferry(arguments + ["--state", work.state, "--json"])
    }

    /// Bytes of the files under `root`, as on disk.
    private func bytesOnDisk(_ root: String) throws -> Int {
        try TreeComparison.files(in: root).keys.reduce(0) { total, path in
            let attributes = try FileManager.default.attributesOfItem(atPath: root + "/" + path)
            return total + ((attributes[.size] as? NSNumber)?.intValue ?? 0)
        }
    }

    private func names(_ root: String) throws -> Set<String> {
        Set(try TreeComparison.files(in: root).keys)
    }

    @Test("a first pull under a budget fetches the newest files that fit and leaves the rest remote only")
    func firstPullFetchesOnlyWhatFits() async throws {
        let server = try await TestServer(.nginx)
        let remote = server.directory + "/root/library"
        // Ten photos of 100 KiB, IMG_0 the oldest; the budget holds three and a half.
        for index in 0..<10 {
            try TreeGenerator.write(at: remote + "/IMG_\(index).jpg", size: 100 * Self.kib, seed: UInt64(index),
                                    modified: 1_700_000_000 + Double(index) * 100)
        }
        let work = try setUp(server, limit: "{ max_size: 350K }")
        let budget = 350 * Self.kib
        let local = work.directory.child("lib")

        let first = try await run(work, ["pull", "library"])
        #expect(first.status == 0, "\(first.diagnostics)")
        // Never more than the budget (plus one file) fetched: nothing was on disk before.
        let fetched = first.int("downloaded_bytes") ?? Int.max
        #expect(fetched <= budget + 100 * Self.kib, "fetched \(fetched) bytes under a budget of \(budget): \(first.diagnostics)")
        #expect(first.int("downloaded") == 3 && first.int("left_remote") == 7 && first.int("evicted") == nil, "\(first.diagnostics)")
        #expect(try names(local) == ["IMG_7.jpg", "IMG_8.jpg", "IMG_9.jpg"])
        #expect(try bytesOnDisk(local) <= budget)

        // The rest is remote only: the next pull fetches nothing, and asks no eviction.
        let again = try await run(work, ["pull", "library"])
        #expect(again.status == 0 && again.int("downloaded") == 0 && again.int("evicted") == nil, "\(again.diagnostics)")
        let status = try await work.ferry(["status", "library", "--state", work.state])
        #expect(status.standardOutput.contains("cache: 3 files local") && status.standardOutput.contains("7 remote only"),
                "\(status.diagnostics)")

        // A newer photo arrives: it is fetched, and the oldest local one makes room first.
        try TreeGenerator.write(at: remote + "/IMG_10.jpg", size: 100 * Self.kib, seed: 10, modified: 1_700_002_000)
        let newer = try await run(work, ["pull", "library"])
        #expect(newer.status == 0 && newer.int("downloaded") == 1 && newer.int("evicted") == 1, "\(newer.diagnostics)")
        #expect(try names(local) == ["IMG_8.jpg", "IMG_9.jpg", "IMG_10.jpg"])
        #expect(try bytesOnDisk(local) <= budget)
    }

    @Test("a file fetched on demand is not evicted by the run that fetched it, even with the folder full of kept files")
    func fileFetchedOnDemandStays() async throws {
        let server = try await TestServer(.nginx)
        let remote = server.directory + "/root/library"
        // A kept thumbnail of 200 KiB leaves room for no photo of 100 KiB under 250 KiB.
        try TreeGenerator.write(at: remote + "/thumbnails/sheet.jpg", size: 200 * Self.kib, seed: 9, modified: 1_600_000_000)
        for index in 0..<3 {
            try TreeGenerator.write(at: remote + "/IMG_\(index).jpg", size: 100 * Self.kib, seed: UInt64(index),
                                    modified: 1_700_000_000 + Double(index) * 100)
        }
        let work = try setUp(server, limit: "{ max_size: 250K, keep_queues: [thumbnails] }")
        let local = work.directory.child("lib")
        let first = try await run(work, ["pull", "library"])
        #expect(first.status == 0, "\(first.diagnostics)")
        #expect(try names(local) == ["thumbnails/sheet.jpg"], "\(first.diagnostics)")

        let fetched = try await run(work, ["pull", "library", "IMG_1.jpg"])
        #expect(fetched.status == 0 && fetched.int("downloaded") == 1, "\(fetched.diagnostics)")
        #expect(!fetched.events(named: "evicted").contains { $0["path"] as? String == "IMG_1.jpg" }, "\(fetched.diagnostics)")
        #expect(try names(local) == ["thumbnails/sheet.jpg", "IMG_1.jpg"], "\(fetched.diagnostics)")
        #expect(try TreeComparison.files(in: local)["IMG_1.jpg"] == TreeComparison.files(in: remote)["IMG_1.jpg"])
    }

    @Test("a file the budget could never hold is refused before any download, with the reason")
    func fileLargerThanTheBudgetIsRefused() async throws {
        let server = try await TestServer(.nginx)
        let remote = server.directory + "/root/library"
        try TreeGenerator.write(at: remote + "/IMG_0.jpg", size: 100 * Self.kib, seed: 1, modified: 1_700_000_000)
        try TreeGenerator.write(at: remote + "/clip.mov", size: 400 * Self.kib, seed: 2, modified: 1_600_000_000)
        let work = try setUp(server, limit: "{ max_size: 250K }")
        let local = work.directory.child("lib")
        let first = try await run(work, ["pull", "library"])
        #expect(first.status == 0 && first.int("downloaded") == 1 && first.int("left_remote") == 1, "\(first.diagnostics)")

        let mark = try await server.logMark()
        let refused = try await work.ferry(["pull", "library", "clip.mov", "--state", work.state])
        #expect(refused.status == 2, "\(refused.diagnostics)")
        #expect(refused.standardError.hasPrefix("ferry: ") && refused.standardError.split(separator: "\n").count == 1,
                "\(refused.diagnostics)")
        #expect(refused.standardError.contains("more than library's local_limit holds"), "\(refused.diagnostics)")
        let end = try await server.logMark()
        #expect(try names(local) == ["IMG_0.jpg"])
        #expect(server.accessLog[mark..<end].allSatisfy { !$0.contains("GET /dav/library/clip.mov") })
    }
}
