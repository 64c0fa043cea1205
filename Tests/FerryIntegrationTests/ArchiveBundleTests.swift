import ArchiveCodec
import FerryTestSupport
import Foundation
import Testing

@Suite("archive bundles: cold files pushed as bundles, pulled back from them", .integration)
struct ArchiveBundleTests {
    /// 2023-11-14: far older than any `older_than` below.
    static let oldTime = 1_700_000_000.0

    /// `count` small files (a few hundred bytes) in nested folders, all modified long ago.
    @discardableResult
    static func writeColdTree(at root: String, count: Int) throws -> [String] {
        var paths: [String] = []
        for index in 0..<count {
            let path = "year \(2000 + index % 7)/été \(index % 13)/note_\(index).txt"
            try TreeGenerator.write(at: root + "/" + path, size: 200 + index % 300, seed: UInt64(index + 1),
                                    modified: oldTime + Double(index) + 0.123456789)
            paths.append(path)
        }
        return paths
    }

    static func config(remoteURL: String, type: String = "webdav", option: String = "url",
                       bundleSize: String = "1M", minFiles: Int = 10, format: String = "tar.zst") -> String {
        """
        remotes:
          store:
            type: \(type)
            \(option): \(remoteURL)
        folders:
          cold:
            path: src
            remote: store
        archive:
          older_than: 30d
          max_file_size: 4k
          bundle_size: \(bundleSize)
          min_files: \(minFiles)
          format: \(format)
        """
    }

    @Test("5,000 cold files to nginx WebDAV as bundles, pulled into an empty folder: identical tree, few requests")
    func fiveThousandFiles() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        let paths = try Self.writeColdTree(at: work.source, count: 5000)
        // One catch-all queue: classifying 5,000 paths against the standard queues' globs is
        // most of a debug build's planning time, and has nothing to do with bundles.
        let config = Self.config(remoteURL: server.url("/dav/cold")) + "\nqueues:\n  - name: archives\n    match: [\"*\"]\n"
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))

        let beforePush = server.accessLog.count
        let push = try await work.ferry(["push", "cold", "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        #expect(push.int("uploaded") == paths.count)
        let pushRequests = server.accessLog.count - beforePush
        let bundles = try FileManager.default.contentsOfDirectory(atPath: server.directory + "/root/cold/.ferry-bundles")
        #expect(bundles.count >= 4 && bundles.count % 2 == 0, "\(bundles)")
        // Only Ferry's folders on the server (bundles, and the catalog of hidden names that
        // a server which hides them gets): no plain copy of any file.
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: server.directory + "/root/cold"))
                    .subtracting(TreeComparison.ferryRecords) == [".ferry-bundles"])

        // A fresh state folder and an empty target: everything comes from the remote.
        let restored = work.directory.child("restored")
        let beforePull = server.accessLog.count
        let pull = try await work.ferry(["pull", restored, "--from", "dav://" + server.origin.dropFirst("http://".count) + "/dav/cold",
                                         "--state", work.directory.child("fresh-state"), "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == paths.count)
        let pullRequests = server.accessLog.count - beforePull
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: true) == [])
        #expect(try work.temporaryFiles(in: restored) == [])

        // The point of bundles: a small fraction of one request per file.
        #expect(pushRequests + pullRequests < paths.count / 50, "push \(pushRequests), pull \(pullRequests) requests")
        print("archive bundles: \(paths.count) files, \(bundles.count / 2) bundles, push \(pushRequests) requests, pull \(pullRequests) requests")
    }

    /// A workspace whose config.yml pushes `src` to the local folder `dst` with bundles.
    static func localWorkspace(files: Int, minFiles: Int = 10, format: String = "tar.zst") throws -> (Workspace, [String]) {
        let work = Workspace()
        let paths = try writeColdTree(at: work.source, count: files)
        try Data(config(remoteURL: "dst", type: "local", option: "path", minFiles: minFiles, format: format).utf8)
            .write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        return (work, paths)
    }

    static func manifests(in remote: String) throws -> [[String: Any]] {
        let folder = remote + "/.ferry-bundles"
        return try FileManager.default.contentsOfDirectory(atPath: folder).sorted().filter { $0.hasSuffix(".manifest.json") }.map {
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/" + $0))) as? [String: Any] ?? [:]
        }
    }

    @Test("push again sends nothing; a changed file leaves its bundle, a deleted one is dropped, and pull follows")
    func membersLeaveBundles() async throws {
        let (work, paths) = try Self.localWorkspace(files: 40)
        let dryRun = try await work.ferry(["push", "cold", "--state", work.state, "--json", "--dry-run"])
        #expect(dryRun.status == 0, "\(dryRun.diagnostics)")
        #expect(dryRun.events(named: "planned").count == 40)
        #expect(dryRun.events(named: "planned").allSatisfy { $0["queue"] as? String == "archives" })
        #expect(!FileManager.default.fileExists(atPath: work.destination))
        let first = try await work.ferry(["push", "cold", "--state", work.state, "--json"])
        #expect(first.status == 0, "\(first.diagnostics)")
        #expect(first.int("uploaded") == 40)
        #expect(Set(first.events(named: "transferred").compactMap { $0["queue"] as? String }) == ["archives"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.destination) == [".ferry-bundles"])
        let manifest = try #require(try Self.manifests(in: work.destination).first)
        let members = try #require(manifest["members"] as? [[String: Any]])
        #expect(members.count == 40)
        #expect(members.allSatisfy { ($0["sha256"] as? String)?.count == 64 })

        try TreeGenerator.write(at: work.state + "/bundles/pair-1/.bundle-killed.tar.zst.ferry-part", size: 10, seed: 1)
        // What a push killed between a bundle's two uploads leaves: removed once an hour old.
        let oldOrphan = work.destination + "/.ferry-bundles/bundle-20200101T000000Z-00000002.tar.zst"
        let newOrphan = work.destination + "/.ferry-bundles/bundle-20200101T000000Z-00000003.zip"
        try TreeGenerator.write(at: oldOrphan, size: 100, seed: 1, modified: Self.oldTime)
        try TreeGenerator.write(at: newOrphan, size: 100, seed: 1)

        let again = try await work.ferry(["push", "cold", "--state", work.state, "--json"])
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(again.int("uploaded") == 0)
        #expect(again.int("skipped") == 40)
        #expect(!FileManager.default.fileExists(atPath: oldOrphan))
        #expect(FileManager.default.fileExists(atPath: newOrphan))
        // Bundles are built and fetched in the pair's work folder, which a run leaves empty
        // and clears of what a killed run left.
        let workFolder = work.state + "/bundles/pair-1"
        #expect(try FileManager.default.contentsOfDirectory(atPath: workFolder) == [])
        try FileManager.default.removeItem(atPath: newOrphan)

        // A bundled file edited now (no longer cold) goes plain; a deleted one leaves with --delete.
        let changed = paths[3]
        let deleted = paths[7]
        try TreeGenerator.write(at: work.source + "/" + changed, size: 999, seed: 77)
        try FileManager.default.removeItem(atPath: work.source + "/" + deleted)
        let third = try await work.ferry(["push", "cold", "--state", work.state, "--json", "--delete"])
        #expect(third.status == 0, "\(third.diagnostics)")
        #expect(third.int("uploaded") == 1)
        #expect(third.int("deleted") == 1)
        #expect(FileManager.default.fileExists(atPath: work.destination + "/" + changed))
        let rewritten = try #require(try Self.manifests(in: work.destination).first?["members"] as? [[String: Any]])
        let listed = Set(rewritten.compactMap { $0["path"] as? String })
        #expect(listed.count == 38 && !listed.contains(changed) && !listed.contains(deleted))

        // Pull with a fresh journal: the changed file from its plain copy, the rest from the bundle.
        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", work.destination,
                                         "--state", work.directory.child("fresh"), "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == 39)
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: true) == [])
    }

    @Test("every format restores the tree with nanosecond mtimes (from the manifest)", arguments: ["tar.gz", "zip"])
    func formats(_ format: String) async throws {
        let (work, paths) = try Self.localWorkspace(files: 25, format: format)
        let push = try await work.ferry(["push", "cold", "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.destination + "/.ferry-bundles").contains { $0.hasSuffix("." + format) })
        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", work.destination, "--state", work.directory.child("fresh"), "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == paths.count)
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: true) == [])
    }

    @Test("with the journal lost, a push finds its files in the bundles' manifests and sends nothing")
    func lostJournal() async throws {
        let (work, paths) = try Self.localWorkspace(files: 30)
        let first = try await work.ferry(["push", "cold", "--state", work.state, "--json"])
        #expect(first.status == 0, "\(first.diagnostics)")
        try FileManager.default.removeItem(atPath: work.state)
        let again = try await work.ferry(["push", "cold", "--state", work.state, "--json"])
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(again.int("uploaded") == 0)
        #expect(again.int("skipped") == paths.count)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.destination + "/.ferry-bundles").count == 2)
    }

    @Test("a restore that would cut into min_free_space fails its files before a byte is written")
    func freeSpace() async throws {
        let (work, paths) = try Self.localWorkspace(files: 20)
        let push = try await work.ferry(["push", "cold", "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        let config = work.directory.child("config.yml")
        let text = try String(contentsOfFile: config, encoding: .utf8) + "\ntransfers:\n  min_free_space: 100000000G\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: config))
        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", work.destination, "--state", work.directory.child("fresh"), "--json"])
        #expect(pull.status == 1, "\(pull.diagnostics)")
        #expect(pull.events(named: "failed").count == paths.count)
        #expect(pull.events(named: "failed").allSatisfy { ($0["error"] as? String ?? "").contains("not enough free space") })
        #expect(try TreeComparison.files(in: restored).isEmpty)
    }

    @Test("a bundle upload cut off by the network leaves its files queued (not failed); the next push sends them")
    func connectionLost() async throws {
        let server = try await TestServer(.nginx)
        // Every attempt (2 in each of the 3 passes) is cut off at its first PUTs: the bundle's
        // upload is the run's first, so it probes the server first, three files at once (a
        // PUT each); the first 18 PUTs get a TCP reset.
        let proxy = try await FaultProxy(upstream: server.origin, share: 0,
                                         options: ["--script", "PUT=" + Array(repeating: "reset", count: 18).joined(separator: ",")])
        let work = Workspace()
        let paths = try Self.writeColdTree(at: work.source, count: 20)
        let config = Self.config(remoteURL: proxy.origin + "/dav/cold") + """

            retry:
              attempts: 2
              base_delay: 50ms
              offline_wait: 1s
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))

        let first = try await work.ferry(["push", "cold", "--state", work.state, "--json"])
        #expect(first.status == 1, "\(first.diagnostics)")
        #expect(first.int("uploaded") == 0)
        #expect(first.events(named: "failed").count == paths.count)
        #expect(first.events(named: "failed").allSatisfy { ($0["error"] as? String ?? "").contains("stays queued") })
        let status = try await work.ferry(["status", "--state", work.state, "--json", "--errors"])
        #expect(status.standardOutput.contains("needsUpload") && !status.standardOutput.contains("syncError"),
                "\(status.diagnostics)")

        let second = try await work.ferry(["push", "cold", "--state", work.state, "--json"])
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(second.int("uploaded") == paths.count)
    }

    @Test("a truncated bundle fails the files it cannot give, each with the cause; none is left partial",
          arguments: ["tar.zst", "tar.gz", "zip"])
    func truncatedBundle(_ format: String) async throws {
        let (work, paths) = try Self.localWorkspace(files: 60, format: format)
        let push = try await work.ferry(["push", "cold", "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        let folder = work.destination + "/.ferry-bundles"
        let bundle = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix("." + format) })
        let bytes = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + bundle))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: folder + "/" + bundle))

        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", work.destination,
                                         "--state", work.directory.child("fresh"), "--json"])
        #expect(pull.status == 1, "\(pull.diagnostics)")
        let failed = pull.events(named: "failed")
        let downloaded = pull.int("downloaded") ?? -1
        #expect(!failed.isEmpty)
        #expect(downloaded + failed.count == paths.count)
        #expect(failed.allSatisfy { ($0["error"] as? String ?? "").contains("damaged or cut short") }, "\(failed.prefix(2))")

        // What was restored is complete and right; nothing else is there.
        let present = try TreeComparison.files(in: restored)
        #expect(present.count == downloaded)
        for path in present.keys {
            #expect(try TreeComparison.sameContent(work.source + "/" + path, restored + "/" + path))
        }
        #expect(try work.temporaryFiles(in: restored) == [])
    }

    @Test("hostile member names and links in a bundle are refused per file; nothing lands outside the folder")
    func hostileBundle() async throws {
        let (work, paths) = try Self.localWorkspace(files: 12)
        let push = try await work.ferry(["push", "cold", "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")

        // A bundle made by hand: a file and a symbolic link to /etc/passwd, and a manifest
        // that also names paths outside the folder.
        let scratch = work.directory.child("hostile")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        try TreeGenerator.write(at: scratch + "/ok.txt", size: 321, seed: 5)
        try FileManager.default.createSymbolicLink(atPath: scratch + "/link.txt", withDestinationPath: "/etc/passwd")
        let name = "bundle-20200101T000000Z-00000001.tar.zst"
        let bundlePath = work.destination + "/.ferry-bundles/" + name
        try await onOwnThread {
            let tar = Process()
            tar.executableURL = URL(fileURLWithPath: "/bin/tar")
            tar.arguments = ["-cf", bundlePath, "-C", scratch, "ok.txt", "link.txt"]
            try tar.run()
            tar.waitUntilExit()
        }
        let okBytes = try Data(contentsOf: URL(fileURLWithPath: scratch + "/ok.txt"))
        func member(_ path: String, entry: String? = nil, size: Int = 321, sha: String = String(repeating: "0", count: 64)) -> [String: Any] {
            ["path": path, "entry": entry ?? path, "size": size, "modifiedNanos": 1_600_000_000_000_000_000, "sha256": sha]
        }
        let manifest: [String: Any] = [
            "ferryBundleManifest": 1, "bundle": name, "format": "tar.zst", "size": 10240, "createdAt": 1_577_836_800.0,
            "members": [
                member("ok.txt", sha: MemberHash.hex(of: Array(okBytes))),
                member("link.txt"),
                member("../escape.txt", entry: "ok.txt"),
                member("/abs.txt", entry: "ok.txt"),
                member("a/../../up.txt", entry: "ok.txt"),
            ],
        ]
        try JSONSerialization.data(withJSONObject: manifest)
            .write(to: URL(fileURLWithPath: work.destination + "/.ferry-bundles/" + name + ".manifest.json"))

        let restored = work.directory.child("inner/restored")
        let pull = try await work.ferry(["pull", restored, "--from", work.destination,
                                         "--state", work.directory.child("fresh"), "--json"])
        #expect(pull.status == 1, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == paths.count + 1)
        let failures = Dictionary(pull.events(named: "failed").map { ($0["path"] as? String ?? "", $0["error"] as? String ?? "") },
                                  uniquingKeysWith: { first, _ in first })
        #expect(Set(failures.keys) == ["link.txt", "../escape.txt", "/abs.txt", "a/../../up.txt"], "\(failures)")
        #expect(failures["link.txt"]?.contains("symbolicLink") == true)
        #expect(failures["/abs.txt"]?.contains("absolute") == true)
        #expect(try TreeComparison.sameContent(scratch + "/ok.txt", restored + "/ok.txt"))
        #expect(!FileManager.default.fileExists(atPath: restored + "/link.txt"))
        for outside in ["inner/escape.txt", "escape.txt", "inner/up.txt", "up.txt"] {
            #expect(!FileManager.default.fileExists(atPath: work.directory.child(outside)))
        }
        #expect(!FileManager.default.fileExists(atPath: "/abs.txt"))
        #expect(try work.temporaryFiles(in: restored) == [])
    }
}

@Suite("archive files: the archives queue and ferry ls --archive-contents", .integration)
struct ArchiveFileTests {
    @Test("zip, tar.* and 7z files go to the archives queue, after everything else")
    func archivesQueue() async throws {
        let work = Workspace()
        for (index, name) in ["backup.zip", "old/site.tar.gz", "disk.7z", "IMG_1.jpg", "track.gpx"].enumerated() {
            try TreeGenerator.write(at: work.source + "/" + name, size: 1000, seed: UInt64(index + 1))
        }
        let push = try await work.push(["--transfers", "1"])
        #expect(push.status == 0, "\(push.diagnostics)")
        let queues = Dictionary(push.events(named: "transferred").map { ($0["path"] as? String ?? "", $0["queue"] as? String ?? "") },
                                uniquingKeysWith: { first, _ in first })
        #expect(queues == ["backup.zip": "archives", "old/site.tar.gz": "archives", "disk.7z": "archives",
                           "IMG_1.jpg": "media", "track.gpx": "gpx"])
        #expect(push.transferredPaths.suffix(3).allSatisfy { queues[$0] == "archives" })
    }

    @Test("ls --archive-contents lists members, marks links and hostile names, and fails on a damaged archive")
    func listContents() async throws {
        let work = Workspace()
        let remote = work.destination
        try TreeGenerator.write(at: work.directory.child("plain.txt"), size: 42, seed: 1)
        try FileManager.default.createDirectory(atPath: remote + "/sub", withIntermediateDirectories: true)
        let writer = try ArchiveWriter(path: remote + "/sub/backup.tar.gz", format: .tarGzip)
        _ = try writer.append(file: work.directory.child("plain.txt"), as: "notes/a.txt", size: 42, modifiedNanos: 1_600_000_000_000_000_000)
        _ = try writer.append(file: work.directory.child("plain.txt"), as: "../escape.txt", size: 42, modifiedNanos: 0)
        try writer.finish()
        try Data("not a zip".utf8).write(to: URL(fileURLWithPath: remote + "/broken.zip"))

        // Its scratch folder goes to TMPDIR, private to the user, and is gone afterwards.
        let scratch = work.directory.child("tmp")
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let good = try await work.ferry(["ls", remote + "/sub", "--archive-contents", "--json"], environment: ["TMPDIR": scratch])
        #expect(good.status == 0, "\(good.diagnostics)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch) == [])
        let members = good.events.filter { $0["member"] != nil }
        #expect(members.compactMap { $0["member"] as? String } == ["notes/a.txt", "../escape.txt"])
        #expect(members.first?["size"] as? Int == 42)
        #expect(members.first?["refused"] is NSNull)
        #expect((members.last?["refused"] as? String)?.contains("..") == true)

        let all = try await work.ferry(["ls", remote, "-R", "--archive-contents"])
        #expect(all.status == 1, "\(all.diagnostics)")
        #expect(all.standardOutput.contains("sub/backup.tar.gz » notes/a.txt"))
        #expect(all.standardError.contains("broken.zip"))
    }
}
