import FerryTestSupport
import Foundation
import Testing

@Suite("two-way sync: guard, renames, resolve, verify, media items", .integration)
struct TwoWaySyncTests {
    func sync(_ work: Workspace, _ extra: [String] = []) async throws -> FerryProcess.Result {
        try await work.ferry(["sync", work.source, "--to", work.destination, "--state", work.state, "--json"] + extra)
    }

    func writeFiles(_ root: String, count: Int, prefix: String = "IMG_") throws {
        for index in 0..<count {
            try TreeGenerator.write(at: root + "/DCIM/\(prefix)\(index).jpg", size: 1000 + index, seed: UInt64(index),
                                    modified: 1_700_000_000 + Double(index))
        }
    }

    @Test("a run that would delete 80% of a side stops, exits non-zero with a clear message, and changes nothing",
          arguments: ["local", "remote"])
    func massDeleteGuard(_ side: String) async throws {
        let work = Workspace()
        try writeFiles(work.source, count: 10)
        let first = try await sync(work)
        #expect(first.status == 0, "\(first.diagnostics)")
        let emptied = side == "local" ? work.source : work.destination
        for index in 0..<8 { try FileManager.default.removeItem(atPath: emptied + "/DCIM/IMG_\(index).jpg") }
        let before = try TreeComparison.files(in: side == "local" ? work.destination : work.source)

        let refused = try await sync(work)
        #expect(refused.status == 1, "\(refused.diagnostics)")
        let target = side == "local" ? "remote" : "local folder"
        #expect(refused.standardError.contains("refusing to delete 8 of 10 files on the \(target)"), "\(refused.diagnostics)")
        #expect(refused.standardError.contains("mounted"))
        #expect(try TreeComparison.files(in: side == "local" ? work.destination : work.source) == before)

        // The files come back (the disk is mounted again): nothing was lost, nothing is deleted.
        try writeFiles(emptied, count: 8)
        let restored = try await sync(work)
        #expect(restored.status == 0, "\(restored.diagnostics)")
        #expect(restored.int("deleted") == 0)
        #expect(try TreeComparison.differences(work.source, work.destination, compareModificationTimes: false,
                                               ignoringFolders: [".ferry-trash"]) == [])

        // Deliberately: --force-delete lets it through, into the trash.
        for index in 0..<8 { try FileManager.default.removeItem(atPath: emptied + "/DCIM/IMG_\(index).jpg") }
        let forced = try await sync(work, ["--force-delete"])
        #expect(forced.status == 0, "\(forced.diagnostics)")
        #expect(forced.int("deleted") == 8 && forced.int("trashed") == 8)
        let other = side == "local" ? work.destination : work.source
        #expect(try TreeComparison.files(in: other + "/DCIM").count == 2)
        #expect(try TreeComparison.files(in: other + "/.ferry-trash").count == 8)
    }

    @Test("sync refuses --delete and takes --max-delete alone")
    func deleteFlags() async throws {
        let work = Workspace()
        try writeFiles(work.source, count: 1)
        let refused = try await sync(work, ["--delete"])
        #expect(refused.status == 2)
        #expect(refused.standardError.contains("sync always carries deletions over"))
        #expect(try await sync(work, ["--max-delete", "0"]).status == 0)
    }

    @Test("a local rename is one MOVE on the remote, not an upload and a delete",
          arguments: [TestServer.Kind?.none, .nginx, .apache])
    func renameIsMove(_ kind: TestServer.Kind?) async throws {
        let work = Workspace()
        let server: TestServer? = if let kind { try await TestServer(kind) } else { nil }
        let remoteDirectory = server.map { $0.directory + "/root/phone" } ?? work.destination
        let remote = server.map { "dav://" + $0.origin.dropFirst("http://".count) + "/dav/phone" } ?? work.destination
        let sync = ["sync", work.source, "--to", remote, "--state", work.state, "--json"]
        try writeFiles(work.source, count: 4)
        #expect(try await work.ferry(sync).status == 0)
        try FileManager.default.createDirectory(atPath: work.source + "/2024", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: work.source + "/DCIM/IMG_2.jpg", toPath: work.source + "/2024/holiday.jpg")
        let renamed = try await work.ferry(sync)
        #expect(renamed.status == 0, "\(renamed.diagnostics)")
        #expect(renamed.int("uploaded") == 0 && renamed.int("deleted") == 0 && renamed.int("renamed") == 1, "\(renamed.diagnostics)")
        let moved = renamed.events(named: "moved").first
        #expect(moved?["path"] as? String == "DCIM/IMG_2.jpg" && moved?["target"] as? String == "2024/holiday.jpg")
        #expect(try TreeComparison.differences(work.source, remoteDirectory, compareModificationTimes: false,
                                               ignoringFolders: Set([".ferry-trash"]).union(server?.bookkeepingFolders ?? [])) == [])
        let again = try await work.ferry(sync)
        #expect(again.int("uploaded") == 0 && again.int("downloaded") == 0 && again.int("renamed") == 0, "\(again.diagnostics)")
    }

    @Test("--dry-run prints the two-way plan and changes nothing, on either side or in the journal")
    func dryRun() async throws {
        let work = Workspace()
        try writeFiles(work.source, count: 3)
        #expect(try await sync(work).status == 0)
        try TreeGenerator.write(at: work.source + "/DCIM/IMG_0.jpg", size: 5000, seed: 50, modified: 1_700_100_000)
        try TreeGenerator.write(at: work.destination + "/DCIM/IMG_0.jpg", size: 6000, seed: 60, modified: 1_700_200_000)
        try TreeGenerator.write(at: work.destination + "/DCIM/new.jpg", size: 10, seed: 61)
        try FileManager.default.removeItem(atPath: work.source + "/DCIM/IMG_1.jpg")
        let local = try TreeComparison.files(in: work.source)
        let remote = try TreeComparison.files(in: work.destination)

        let plan = try await sync(work, ["--dry-run"])
        #expect(plan.status == 0, "\(plan.diagnostics)")
        let planned = Set(plan.events(named: "planned").map { "\($0["action"] as? String ?? "") \($0["path"] as? String ?? "")" })
        #expect(planned == ["keepBothLocalLoses DCIM/IMG_0.jpg", "download DCIM/new.jpg", "deleteRemote DCIM/IMG_1.jpg"])
        #expect(try TreeComparison.files(in: work.source) == local)
        #expect(try TreeComparison.files(in: work.destination) == remote)
        // The same plan again: nothing was recorded by the dry run.
        let again = try await sync(work, ["--dry-run"])
        #expect(Set(again.events(named: "planned").map { "\($0["action"] as? String ?? "") \($0["path"] as? String ?? "")" }) == planned)
    }

    @Test("policy ask: the conflict waits, is listed, and ferry resolve --keep decides it at the next sync",
          arguments: ["local", "remote", "both"])
    func resolveConflict(_ keep: String) async throws {
        let work = Workspace()
        let config = """
            remotes:
              backup:
                type: local
                path: dst
            folders:
              phone:
                path: src
                remote: backup
                mode: sync
                conflict: ask
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        try writeFiles(work.source, count: 2)
        #expect(try await work.ferry(["sync", "phone", "--state", work.state, "--json"]).status == 0)
        try TreeGenerator.write(at: work.source + "/DCIM/IMG_0.jpg", size: 3000, seed: 100, modified: 1_700_001_000)
        try TreeGenerator.write(at: work.destination + "/DCIM/IMG_0.jpg", size: 4000, seed: 200, modified: 1_700_002_000)

        let waiting = try await work.ferry(["sync", "phone", "--state", work.state, "--json"])
        #expect(waiting.status == 1)
        #expect(waiting.int("conflicts") == 1)
        let listed = try await work.ferry(["status", "phone", "--conflicts", "--state", work.state])
        #expect(listed.standardOutput.contains("conflict: DCIM/IMG_0.jpg: changed on both sides"), "\(listed.diagnostics)")

        let resolved = try await work.ferry(["resolve", "src/DCIM/IMG_0.jpg", "--keep", keep, "--state", work.state])
        #expect(resolved.status == 0, "\(resolved.diagnostics)")
        #expect(resolved.standardOutput.contains("the next `ferry sync phone` carries it out"))
        let nothingLeft = try await work.ferry(["status", "phone", "--conflicts", "--state", work.state])
        #expect(!nothingLeft.standardOutput.contains("conflict: DCIM"), "\(nothingLeft.diagnostics)")

        let settled = try await work.ferry(["sync", "phone", "--state", work.state, "--json"])
        #expect(settled.status == 0, "\(settled.diagnostics)")
        let local = try TreeComparison.files(in: work.source + "/DCIM")
        #expect(try TreeComparison.differences(work.source, work.destination, compareModificationTimes: false,
                                               ignoringFolders: [".ferry-trash"]) == [])
        switch keep {
        case "local": #expect(local["IMG_0.jpg"]?.size == 3000 && local.count == 2)
        case "remote": #expect(local["IMG_0.jpg"]?.size == 4000 && local.count == 2)
        default:
            #expect(local["IMG_0.jpg"]?.size == 4000 && local.count == 3)
            #expect(local.contains { $0.key.hasPrefix("IMG_0.conflict-") && $0.value.size == 3000 })
        }
        let unresolvable = try await work.ferry(["resolve", "src/DCIM/IMG_1.jpg", "--keep", "local", "--state", work.state])
        #expect(unresolvable.status == 2 && unresolvable.standardError.contains("no conflict at"))
    }

    @Test("verify: differences, orphans and stale rows by metadata; changed bytes with --hash; --repair fixes the journal")
    func verify() async throws {
        let work = Workspace()
        try writeFiles(work.source, count: 4)
        #expect(try await sync(work).status == 0)
        let clean = try await work.ferry(["verify", work.source, "--to", work.destination, "--state", work.state, "--hash", "--json"])
        #expect(clean.status == 0, "\(clean.diagnostics)")
        #expect((clean.events(named: "verified").first?["hashed"] as? NSNumber)?.intValue == 4)

        // Same size and time, different bytes: only a hash can tell.
        let tampered = work.destination + "/DCIM/IMG_1.jpg"
        let attributes = try FileManager.default.attributesOfItem(atPath: tampered)
        try TreeGenerator.write(at: tampered, size: 1001, seed: 999)
        try FileManager.default.setAttributes([.modificationDate: attributes[.modificationDate] as Any], ofItemAtPath: tampered)
        // Gone from both sides behind the journal's back; and an orphan on the remote.
        try FileManager.default.removeItem(atPath: work.source + "/DCIM/IMG_3.jpg")
        try FileManager.default.removeItem(atPath: work.destination + "/DCIM/IMG_3.jpg")
        try TreeGenerator.write(at: work.destination + "/DCIM/stray.jpg", size: 10, seed: 5)

        let byMetadata = try await work.ferry(["verify", work.source, "--to", work.destination, "--state", work.state, "--json"])
        #expect(byMetadata.status == 1)
        let kinds = Set(byMetadata.events(named: "finding").map { "\($0["kind"] as? String ?? ""):\($0["path"] as? String ?? "")" })
        #expect(kinds == ["staleRow:DCIM/IMG_3.jpg", "remoteOrphan:DCIM/stray.jpg"], "\(byMetadata.diagnostics)")

        let byHash = try await work.ferry(["verify", work.source, "--to", work.destination, "--state", work.state, "--hash", "--repair", "--json"])
        #expect(byHash.status == 0, "\(byHash.diagnostics)")
        let hashKinds = Set(byHash.events(named: "finding").compactMap { $0["kind"] as? String })
        #expect(hashKinds == ["staleRow", "remoteOrphan", "contentDiffers"], "\(byHash.diagnostics)")
        #expect((byHash.events(named: "verified").first?["removed_rows"] as? NSNumber)?.intValue == 1)

        // After the repair the next sync keeps both versions of the file whose bytes differed.
        let settled = try await sync(work)
        #expect(settled.status == 0, "\(settled.diagnostics)")
        #expect(settled.int("kept_both") == 1, "\(settled.diagnostics)")
        let after = try await work.ferry(["verify", work.source, "--to", work.destination, "--state", work.state, "--hash", "--json"])
        #expect(after.status == 0, "\(after.diagnostics)")
    }

    @Test("media items: with the thumbnail sent and the full picture still queued, the item is filesPending")
    func filesPending() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/DCIM/.thumbnails/IMG_0001.jpg", size: 20_000, seed: 1)
        try TreeGenerator.write(at: work.source + "/DCIM/IMG_0001.jpg", size: 24 << 20, seed: 2)
        try TreeGenerator.write(at: work.source + "/DCIM/IMG_0001.xmp", size: 500, seed: 3)
        try TreeGenerator.write(at: work.source + "/DCIM/IMG_0002.jpg", size: 1000, seed: 4)
        // Through the exec test plugin, which holds the large picture's upload until the
        // test writes `release`: one transfer at a time, the thumbnail goes first (highest
        // queue), then the picture waits at the gate, and the run is stopped there, on
        // any machine.
        let config = work.directory.child("config.yml")
        try ("remotes:\n" + work.heldStoreRemote("store", hold: "DCIM/IMG_0001.jpg")).write(toFile: config, atomically: true,
                                                                                           encoding: .utf8)
        let push = ["push", work.source, "--to", "store", "--config", config, "--state", work.state, "--json", "--transfers", "1"]
        let running = try FerryProcess(push, in: work.directory.path)
        let held = work.directory.child("held")
        await when({
            FileManager.default.fileExists(atPath: held)
                && running.outputSoFar.contains("\"path\":\"DCIM/.thumbnails/IMG_0001.jpg\"")
        }, do: { running.killHard() })
        _ = await running.wait()

        let status = try await work.ferry(["status", work.source, "--items", "--state", work.state, "--json"])
        #expect(status.status == 0, "\(status.diagnostics)")
        let folder = try #require((status.events.first?["folders"] as? [[String: Any]])?.first, "\(status.diagnostics)")
        let items = try #require(folder["items"] as? [String: Any])
        let unsettled = try #require(items["unsettled"] as? [[String: Any]])
        let item = try #require(unsettled.first { $0["item"] as? String == "DCIM/IMG_0001" }, "\(status.standardOutput)")
        #expect(item["status"] as? String == "filesPending")
        let files = (item["files"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(files == ["DCIM/.thumbnails/IMG_0001.jpg", "DCIM/IMG_0001.jpg", "DCIM/IMG_0001.xmp"])
        let text = try await work.ferry(["status", work.source, "--items", "--state", work.state])
        #expect(text.standardOutput.contains("partly sent: DCIM/IMG_0001: DCIM/.thumbnails/IMG_0001.jpg (in sync)"), "\(text.diagnostics)")

        // Once the rest arrives, the item is in sync.
        try Data("release\n".utf8).write(to: URL(fileURLWithPath: work.directory.child("release")))
        let rest = try await work.ferry(push)
        #expect(rest.status == 0, "\(rest.diagnostics)")
        let done = try await work.ferry(["status", work.source, "--items", "--state", work.state, "--json"])
        let doneFolder = try #require((done.events.first?["folders"] as? [[String: Any]])?.first)
        let doneItems = try #require(doneFolder["items"] as? [String: Any])
        #expect((doneItems["unsettled"] as? [Any])?.isEmpty == true)
        #expect(((doneItems["statuses"] as? [String: [String: Any]])?["inSync"]?["items"] as? NSNumber)?.intValue == 2)
    }
}

@Suite("two-way sync: trash retention", .integration)
struct TrashRetentionTests {
    @Test("a sync empties trash folders past their retention on both sides and keeps recent ones",
          arguments: [TestServer.Kind?.none, .nginx, .apache])
    func purge(_ kind: TestServer.Kind?) async throws {
        let work = Workspace()
        let server: TestServer? = if let kind { try await TestServer(kind) } else { nil }
        let remoteDirectory = server.map { $0.directory + "/root/phone" } ?? work.destination
        let remote = server.map { "dav://" + $0.origin.dropFirst("http://".count) + "/dav/phone" } ?? work.destination
        try TreeGenerator.write(at: work.source + "/DCIM/IMG_1.jpg", size: 1000, seed: 1)
        #expect(try await work.ferry(["sync", work.source, "--to", remote, "--state", work.state]).status == 0)
        // Trash from an old run (with a hidden folder in it) and from a recent one, on both sides.
        let recent = Date().addingTimeInterval(-86_400)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        let recentStamp = formatter.string(from: recent)
        for stamp in ["20200101-000000", recentStamp] {
            try TreeGenerator.write(at: work.source + "/.ferry-trash/\(stamp)/DCIM/old.jpg", size: 10, seed: 2)
            try TreeGenerator.write(at: work.source + "/.ferry-trash/\(stamp)/DCIM/.thumbnails/old.jpg", size: 10, seed: 2)
        }
        // The remote trash is made through the remote (a folder made here would not be the
        // server's to write into): delete a file, then age its run folder by renaming it.
        try FileManager.default.removeItem(atPath: work.source + "/DCIM/IMG_1.jpg")
        let deleting = try await work.ferry(["sync", work.source, "--to", remote, "--state", work.state, "--force-delete"])
        #expect(deleting.status == 0, "\(deleting.diagnostics)")
        let remoteTrash = remoteDirectory + "/.ferry-trash"
        let runFolders = try FileManager.default.contentsOfDirectory(atPath: remoteTrash).filter { $0 != ".DAV" }
        #expect(runFolders.count == 1)
        try FileManager.default.moveItem(atPath: remoteTrash + "/" + runFolders[0], toPath: remoteTrash + "/20200101-000000")

        let purging = try await work.ferry(["sync", work.source, "--to", remote, "--state", work.state, "-v"])
        #expect(purging.status == 0, "\(purging.diagnostics)")
        #expect(!purging.standardError.contains("cannot empty"), "\(purging.diagnostics)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.source + "/.ferry-trash").sorted()
            .filter { $0.hasPrefix("20") }.contains("20200101-000000") == false)
        #expect(FileManager.default.fileExists(atPath: work.source + "/.ferry-trash/\(recentStamp)/DCIM/old.jpg"))
        #expect(!FileManager.default.fileExists(atPath: remoteTrash + "/20200101-000000"))
    }
}

@Suite("two-way sync: interrupted conflict renames", .integration)
struct InterruptedKeepBothTests {
    @Test("a keep-both stopped right after its local rename (before its transfers) ends the same at the next sync")
    func renameDoneTransfersNot() async throws {
        let work = Workspace()
        let name = "/DCIM/IMG_7.jpg"
        try TreeGenerator.write(at: work.source + name, size: 1000, seed: 1, modified: 1_700_000_000)
        let sync = ["sync", work.source, "--to", work.destination, "--state", work.state, "--json"]
        #expect(try await work.ferry(sync).status == 0)
        try TreeGenerator.write(at: work.source + name, size: 2000, seed: 2, modified: 1_700_000_100)
        try TreeGenerator.write(at: work.destination + name, size: 3000, seed: 3, modified: 1_700_000_200)
        // What the keep-both job's first step does, as if the process died right after it.
        let copy = "/DCIM/IMG_7.conflict-20231114-221320-elsewhere.jpg"
        try FileManager.default.moveItem(atPath: work.source + name, toPath: work.source + copy)

        let resumed = try await work.ferry(sync)
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        #expect(resumed.int("kept_both") == 0 && resumed.int("uploaded") == 1 && resumed.int("downloaded") == 1)
        for root in [work.source, work.destination] {
            let files = try TreeComparison.files(in: root + "/DCIM")
            #expect(files.mapValues(\.size) == ["IMG_7.jpg": 3000, String(copy.dropFirst(6)): 2000], "\(root)")
        }
    }
}
