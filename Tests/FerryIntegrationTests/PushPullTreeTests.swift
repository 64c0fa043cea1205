import FerryTestSupport
import Foundation
import Testing

@Suite("push and pull a large tree through the local backend", .integration)
struct PushPullTreeTests {
    @Test("1,200 files push byte-for-byte, push again sends nothing, pull reproduces the tree")
    func pushPushPull() async throws {
        let work = Workspace()
        let written = try await TreeGenerator.generate(
            at: work.source, .init(fileCount: 1_200, largeFileSizes: [12 << 20, 30 << 20], maxSmallSize: 96 * 1024))
        let fileCount = try TreeComparison.files(in: work.source).count
        #expect(fileCount == written.count)

        let first = try await work.push()
        #expect(first.status == 0, "\(first.diagnostics)")
        #expect(first.int("uploaded") == fileCount)
        #expect(first.int("failed") == 0)
        #expect(try TreeComparison.differences(work.source, work.destination) == [])
        #expect(try work.temporaryFiles(in: work.destination) == [])

        let second = try await work.push()
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(second.int("uploaded") == 0)
        #expect(second.int("skipped") == fileCount)
        #expect(second.transferredPaths.isEmpty)

        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", work.destination, "--state", work.state, "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == fileCount)
        #expect(try TreeComparison.differences(work.source, restored) == [])
        #expect(try work.temporaryFiles(in: restored) == [])

        let status = try await work.ferry(["status", "--state", work.state, "--json"])
        #expect(status.status == 0)
        let folders = try #require(status.events.first?["folders"] as? [[String: Any]])
        #expect(folders.count == 2)
        for folder in folders {
            let inSync = (folder["statuses"] as? [String: Any])?["inSync"] as? [String: Any]
            #expect((inSync?["files"] as? NSNumber)?.intValue == fileCount)
        }
    }

    @Test("a changed file is sent again, and only that file")
    func changedFileOnly() async throws {
        let work = Workspace()
        try await TreeGenerator.generate(at: work.source, .init(fileCount: 50, seed: 7))
        #expect(try await work.push().status == 0)
        let victim = try #require(try TreeComparison.files(in: work.source).keys.sorted().first)
        try TreeGenerator.write(at: work.source + "/" + victim, size: 777, seed: 1234, modified: 1_750_000_000)
        let again = try await work.push()
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(again.transferredPaths == [victim])
        #expect(try TreeComparison.differences(work.source, work.destination) == [])
    }

    @Test("--dry-run prints the plan and creates neither the journal nor the target")
    func dryRunChangesNothing() async throws {
        let work = Workspace()
        try await TreeGenerator.generate(at: work.source, .init(fileCount: 20, seed: 8))
        let plan = try await work.push(["--dry-run"])
        #expect(plan.status == 0, "\(plan.diagnostics)")
        #expect(plan.events(named: "planned").count == 20)
        #expect(!FileManager.default.fileExists(atPath: work.state))
        #expect(!FileManager.default.fileExists(atPath: work.destination))
    }

    @Test("--delete mirrors, but refuses to delete most of the target unless allowed")
    func mirrorWithDeletionGuard() async throws {
        let work = Workspace()
        try await TreeGenerator.generate(at: work.source, .init(fileCount: 40, seed: 9))
        #expect(try await work.push().status == 0)
        let files = try TreeComparison.files(in: work.source).keys.sorted()
        for path in files.prefix(32) { try FileManager.default.removeItem(atPath: work.source + "/" + path) }

        let refused = try await work.push(["--delete"])
        #expect(refused.status == 1, "\(refused.diagnostics)")
        #expect(refused.standardError.contains("refusing to delete 32 of 40"))
        #expect(try TreeComparison.files(in: work.destination).count == 40)

        let allowed = try await work.push(["--delete", "--max-delete", "32"])
        #expect(allowed.status == 0, "\(allowed.diagnostics)")
        #expect(allowed.events(named: "deleted").count == 32)
        #expect(try TreeComparison.differences(work.source, work.destination) == [])
    }

    /// 100 bytes go in a staged batch; 2 MiB alone (above the size a batch takes). Either
    /// way the file in the way is no other device's write in progress: the failure is
    /// permanent at once, not tried again for the run's whole retry budget.
    @Test("a file that cannot be placed fails alone, with exit 1 and its error listed", arguments: [100, 2 << 20])
    func oneFileFailsOthersContinue(size: Int) async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/blocked/photo.jpg", size: size, seed: 1)
        try TreeGenerator.write(at: work.source + "/fine/photo.jpg", size: 100, seed: 2)
        // A file on the target where the source has a folder.
        try FileManager.default.createDirectory(atPath: work.destination, withIntermediateDirectories: true)
        try Data("in the way".utf8).write(to: URL(fileURLWithPath: work.destination + "/blocked"))
        let run = try await work.push()
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(run.int("uploaded") == 1)
        #expect(run.int("failed") == 1)
        let failures = try #require(run.summary?["failures"] as? [[String: Any]])
        #expect(failures.first?["path"] as? String == "blocked/photo.jpg")
        #expect((failures.first?["error"] as? String)?.contains("in the way") == true, "\(failures)")
        #expect(run.events(named: "retrying").isEmpty, "\(run.diagnostics)")
        #expect(FileManager.default.fileExists(atPath: work.destination + "/fine/photo.jpg"))
    }
}
