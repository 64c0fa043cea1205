import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// `ferry watch` and `ferry daemon` as a user runs them: the real binary, real files
/// written into a watched folder, a real remote, real signals.
@Suite("watch and daemon", .integration)
struct WatchDaemonTests {
    /// A config with a short quiet period, so tests wait half a second rather than three.
    static func writeConfig(_ work: Workspace, extra: String = "", quiet: String = "500ms") throws -> String {
        let path = work.directory.child("config.yml")
        try Data("watch:\n  quiet_period: \(quiet)\n  stop_timeout: 5s\n\(extra)".utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func transferred(_ process: FerryProcess) -> [[String: Any]] {
        process.outputSoFar.split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }.filter { $0["event"] as? String == "transferred" }
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    @Test("bad input: a missing folder, --dry-run, a daemon with nothing configured: one line, exit 2")
    func badInput() async throws {
        let work = Workspace()
        let missing = try await work.ferry(["watch", work.directory.child("nope"), "--to", work.destination, "--state", work.state])
        #expect(missing.status == 2, "\(missing.diagnostics)")
        #expect(missing.standardError.contains("no such folder"))
        #expect(missing.standardError.split(separator: "\n").count == 1)
        try FileManager.default.createDirectory(atPath: work.source, withIntermediateDirectories: true)
        let dryRun = try await work.ferry(["watch", work.source, "--to", work.destination, "--state", work.state, "--dry-run"])
        #expect(dryRun.status == 2 && dryRun.standardError.contains("--dry-run"), "\(dryRun.diagnostics)")
        let config = try Self.writeConfig(work)
        let daemon = try await work.ferry(["daemon", "--config", config, "--state", work.state])
        #expect(daemon.status == 2 && daemon.standardError.contains("no folder is configured"), "\(daemon.diagnostics)")
        let badLevel = try await work.ferry(["daemon", "--config", config, "--log-format", "xml"])
        #expect(badLevel.status == 2, "\(badLevel.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: work.state + "/journal.sqlite"))
    }

    @Test("files created in a watched folder reach a WebDAV remote with no command; a file written slowly over 10 s is sent once, complete")
    func watchToWebDAV() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try FileManager.default.createDirectory(atPath: work.source, withIntermediateDirectories: true)
        let config = try Self.writeConfig(work)
        let remote = "dav://" + server.origin.dropFirst("http://".count) + "/dav/watched"
        let stored = server.directory + "/root/watched"
        let watch = try FerryProcess(["watch", work.source, "--to", remote, "--state", work.state, "--config", config, "--json"],
                                     in: work.directory.path)
        defer { watch.stopIfRunning() }

        // Give the watcher a moment to set up its watches, then drop files into new folders.
        await when({ Self.exists(work.state + "/daemon-status.json") })
        try FileManager.default.createDirectory(atPath: work.source + "/2026/03/.thumbnails", withIntermediateDirectories: true)
        try TreeGenerator.write(at: work.source + "/2026/03/IMG_0001.jpg", size: 300_000, seed: 1)
        try TreeGenerator.write(at: work.source + "/2026/03/.thumbnails/IMG_0001.jpg", size: 2_000, seed: 2)
        // No command: the watcher sends them once they are quiet (the latency is measured
        // by `make bench`, scripts/bench-watch.py, not here).
        await when({ Self.exists(stored + "/2026/03/IMG_0001.jpg") && Self.exists(stored + "/2026/03/.thumbnails/IMG_0001.jpg") })

        // A video copied in slowly: 20 chunks of 64 KiB, one every half second, written from
        // a thread of its own so that a loaded cooperative pool cannot stretch the pauses.
        let videoPath = work.source + "/2026/03/VID_0002.mp4"
        let handle = try #require(FileHandle(forWritingAtPath: { _ = FileManager.default.createFile(atPath: videoPath, contents: nil); return videoPath }()))
        let seenEarly = Mutex(false)
        let complete = await onOwnThread { () -> Data in
            var expected = Data()
            for chunk in 0..<20 {
                var bytes = Data(count: 64 * 1024)
                bytes.withUnsafeMutableBytes { raw in
                    for index in 0..<raw.count { raw[index] = UInt8(truncatingIfNeeded: index &* 31 &+ chunk) }
                }
                try? handle.write(contentsOf: bytes)
                expected.append(bytes)
                usleep(500_000)
                // Never uploaded half-written: nothing under the final name while it is being written.
                if Self.exists(stored + "/2026/03/VID_0002.mp4") { seenEarly.withLock { $0 = true } }
            }
            try? handle.close()
            return expected
        }
        #expect(!seenEarly.withLock { $0 }, "the video was under its final name before it was complete")
        await when({ (try? Data(contentsOf: URL(fileURLWithPath: stored + "/2026/03/VID_0002.mp4"))) == complete })

        watch.send(SIGTERM)
        let result = await watch.wait()
        #expect(result.status == 0, "\(result.diagnostics)")
        let videoUploads = result.transferredPaths.filter { $0 == "2026/03/VID_0002.mp4" }
        #expect(videoUploads.count == 1, "\(result.diagnostics)")
        #expect(result.transferredPaths.filter { $0 == "2026/03/IMG_0001.jpg" }.count == 1)
        #expect(try work.temporaryFiles(in: stored) == [])
    }

    @Test("10,000 files dropped at once are all uploaded, in queue priority order, in few runs")
    func tenThousandFiles() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try FileManager.default.createDirectory(atPath: work.source, withIntermediateDirectories: true)
        let config = try Self.writeConfig(work)
        let remote = "dav://" + server.origin.dropFirst("http://".count) + "/dav/drop"
        let watch = try FerryProcess(["watch", work.source, "--to", remote, "--state", work.state,
                                      "--config", config, "--json", "--transfers", "1", "--log-level", "info"],
                                     in: work.directory.path)
        defer { watch.stopIfRunning() }
        await when({ Self.exists(work.state + "/daemon-status.json") })

        // Written into a staging folder and moved in as one folder, like a card reader's
        // import: the watcher sees one new folder with 10,000 files already inside.
        let staging = work.directory.child("staging")
        let kinds = ["archives": "zip", "gpx": "gpx", "media": "jpg", "thumbnails": "thumb.jpg"]
        var expected: [String: String] = [:]
        for index in 0..<10_000 {
            let (queue, ext) = kinds.sorted { $0.key < $1.key }[index % 4]
            expected["drop/f\(index).\(ext)"] = queue
        }
        // On a thread of its own: 10,000 writes on the cooperative pool held back every
        // other test's `await`.
        try await onOwnThread { [expected] in
            try FileManager.default.createDirectory(atPath: staging + "/drop", withIntermediateDirectories: true)
            for name in expected.keys { try Data(name.utf8).write(to: URL(fileURLWithPath: staging + "/" + name)) }
        }
        try FileManager.default.moveItem(atPath: staging + "/drop", toPath: work.source + "/drop")
        // Two summaries: the run at start (nothing to do) and the drop's. Counting markers
        // rather than parsing 10,000 lines on every poll.
        await when({ watch.outputSoFar.components(separatedBy: "\"event\":\"summary\"").count > 2 })

        watch.send(SIGTERM)
        let result = await watch.wait()
        #expect(result.status == 0, "\(result.diagnostics)")
        let paths = result.transferredPaths
        #expect(Set(paths) == Set(expected.keys))
        #expect(paths.count == 10_000)
        // One transfer at a time: every thumbnail before any photo, every photo before any
        // track, every track before any archive.
        let rank = ["thumbnails": 0, "media": 1, "gpx": 2, "archives": 3]
        let ranks = paths.compactMap { expected[$0].flatMap { rank[$0] } }
        #expect(ranks == ranks.sorted())
        // One run for the drop (plus the one at start, which found nothing).
        #expect(result.events(named: "summary").filter { ($0["uploaded"] as? Int ?? 0) > 0 }.count == 1,
                "\(result.standardError.split(separator: "\n").filter { $0.contains("run ") }.joined(separator: "\n"))")
    }

    @Test("SIGTERM during a large upload: exit 0 within the bound, and the next start resumes it")
    func sigtermResumes() async throws {
        let work = Workspace()
        try FileManager.default.createDirectory(atPath: work.source, withIntermediateDirectories: true)
        try TreeGenerator.write(at: work.source + "/big.mov", size: 48 << 20, seed: 9)
        let config = try Self.writeConfig(work)
        let arguments = ["watch", work.source, "--to", work.destination, "--state", work.state, "--config", config, "--json"]
        // 24 s for the file: the signal must land while it is on its way, however late a
        // loaded machine notices the first 2 MiB.
        let watch = try FerryProcess(arguments + ["--bwlimit", "2M"], in: work.directory.path)
        defer { watch.stopIfRunning() }
        // Signal once part of the file is on the other side.
        let partial = work.destination + "/.big.mov.ferry-part"
        await when({ ((try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0) > 2 << 20 },
                   do: { watch.send(SIGTERM) })
        // The bound (stop_timeout) is the daemon's to keep; the test judges the outcome: a
        // clean exit that left the transfer at a resumable point (SIGTERM to exit is
        // measured by scripts/bench-watch.py).
        let stopped = await watch.wait()
        #expect(stopped.status == 0, "\(stopped.diagnostics)")
        #expect(!Self.exists(work.destination + "/big.mov"))
        #expect(stopped.transferredPaths.isEmpty)
        // The journal was closed cleanly: its write-ahead log checkpointed and gone.
        #expect(!Self.exists(work.state + "/journal.sqlite-wal"))

        let again = try FerryProcess(arguments, in: work.directory.path)
        defer { again.stopIfRunning() }
        await when({ Self.transferred(again).count == 1 })
        again.send(SIGTERM)
        let resumed = await again.wait()
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        let event = try #require(resumed.events(named: "transferred").first)
        #expect((event["resumed_from"] as? Int ?? 0) > 2 << 20, "\(resumed.diagnostics)")
        #expect(try TreeComparison.differences(work.source, work.destination, compareModificationTimes: false) == [])
    }

    @Test("a new file that settles while a large upload runs joins that run instead of waiting for it")
    func newFileJoinsRunningPush() async throws {
        let work = Workspace()
        try FileManager.default.createDirectory(atPath: work.source, withIntermediateDirectories: true)
        // Written a while ago: the run at start takes it (a fresh file would wait for its
        // quiet period and go in a second run).
        try TreeGenerator.write(at: work.source + "/big.mov", size: 48 << 20, seed: 5, modified: Date().timeIntervalSince1970 - 60)
        let config = try Self.writeConfig(work)
        // 48 s for the video: room for a loaded machine to notice the thumbnail meanwhile
        // (the test stops as soon as the thumbnail is there, so it lasts a few seconds).
        let watch = try FerryProcess(["watch", work.source, "--to", work.destination, "--state", work.state, "--config", config,
                                      "--json", "--bwlimit", "1M", "--log-level", "info"], in: work.directory.path)
        defer { watch.stopIfRunning() }
        // The whole sequence runs on `when`'s own thread: write the thumbnail once part of
        // the video is across, then, the moment the thumbnail has arrived, note whether the
        // video is still going and stop. A test task resumed between these steps on a
        // loaded cooperative pool came back after the whole video and its follow-up run.
        let partial = work.destination + "/.big.mov.ferry-part"
        let source = work.source, destination = work.destination
        let videoGoing = Mutex(false)
        await when({ ((try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0) > 1 << 20 }, do: {
            try? TreeGenerator.write(at: source + "/.thumbnails/IMG_9.jpg", size: 4_000, seed: 6)
            for _ in 0..<30_000 where !Self.exists(destination + "/.thumbnails/IMG_9.jpg") { usleep(10_000) }
            videoGoing.withLock { $0 = !Self.exists(destination + "/big.mov") }
            watch.send(SIGTERM)
        })
        let videoStillGoing = videoGoing.withLock { $0 }
        let result = await watch.wait()
        #expect(result.status == 0, "\(result.diagnostics)")
        // The thumbnail arrived while the video was still on its way, sent by the same run:
        // the only run started is the one at start.
        #expect(videoStillGoing)
        #expect(result.transferredPaths.first == ".thumbnails/IMG_9.jpg", "\(result.diagnostics)")
        let runsStarted = result.standardError.split(separator: "\n").filter { $0.contains("run started") }
        #expect(runsStarted.count == 1, "\(runsStarted)")
    }

    /// At 1,000,000 files a run over the whole tree made a new photo wait 8 s longer than
    /// the quiet period on one core. A run for new files that settled plans them alone, and
    /// so does one for an editor's temporary file renamed away (never synced); a changed
    /// file (it may be a conflict) and a synced file that went still go through a plan of
    /// the whole tree.
    @Test("a new file, saved through a temporary name, is sent by runs that plan only what the watcher saw; a changed one by a run over the whole tree")
    func settledNewFileAlone() async throws {
        let work = Workspace()
        let old = Date().timeIntervalSince1970 - 60
        for index in 0..<30 {
            try TreeGenerator.write(at: work.source + "/d\(index % 3)/IMG_\(index).jpg", size: 1_000 + index, seed: UInt64(index),
                                    modified: old)
        }
        let config = try Self.writeConfig(work)
        let watch = try FerryProcess(["watch", work.source, "--to", work.destination, "--state", work.state, "--config", config,
                                      "--json"], in: work.directory.path)
        defer { watch.stopIfRunning() }
        @Sendable func summaries() -> [[String: Any]] {
            watch.outputSoFar.split(separator: "\n").compactMap { line in
                try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            }.filter { $0["event"] as? String == "summary" }
        }
        @Sendable func sentSince(_ count: Int) -> [String: Any]? {
            summaries().dropFirst(count).first { ($0["uploaded"] as? Int ?? 0) > 0 }
        }
        await when({ summaries().count >= 1 })
        #expect(summaries().first?["uploaded"] as? Int == 30)

        // Written as an editor saves: to a temporary name, then renamed (Foundation's
        // createFile does so), so the watcher also sees a name go that was never synced.
        let started = summaries().count
        try Data(repeating: 7, count: 5_000).write(to: URL(fileURLWithPath: work.source + "/d1/IMG_new.jpg"), options: .atomic)
        await when({ sentSince(started) != nil })
        let newFileRuns = Array(summaries().dropFirst(started))
        // Which requests started each run (its reasons: "watch" alone plans only what the
        // watcher saw): under a full suite beside a CPU burner a run over the whole tree sent
        // the new file in 2 of 3 runs, and the summaries alone did not say why.
        let runReasons = watch.errorSoFar.split(separator: "\n").filter { $0.contains("run started") }
        #expect(newFileRuns.allSatisfy { $0["skipped"] as? Int == 0 }, "a run looked at the other files: \(newFileRuns)\n\(runReasons)")
        #expect(newFileRuns.reduce(0) { $0 + ($1["uploaded"] as? Int ?? 0) } == 1, "\(newFileRuns)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.destination + "/d1/IMG_new.jpg")).count == 5_000)

        let beforeChange = summaries().count
        try Data(repeating: 8, count: 7_000).write(to: URL(fileURLWithPath: work.source + "/d2/IMG_2.jpg"), options: .atomic)
        await when({ sentSince(beforeChange) != nil })
        let whole = sentSince(beforeChange) ?? [:]
        #expect(whole["uploaded"] as? Int == 1, "\(whole)")
        #expect(whole["skipped"] as? Int ?? 0 >= 30, "a changed file's run did not plan the whole tree: \(whole)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.destination + "/d2/IMG_2.jpg")).count == 7_000)

        // A synced file that goes may be a deletion to send (a mirror): a whole run again.
        let beforeRemoval = summaries().count
        try FileManager.default.removeItem(atPath: work.source + "/d0/IMG_0.jpg")
        await when({ summaries().count > beforeRemoval })
        let afterRemoval = summaries()[beforeRemoval]
        #expect(afterRemoval["skipped"] as? Int ?? 0 >= 29, "a synced file's removal did not plan the whole tree: \(afterRemoval)")

        watch.send(SIGTERM)
        let result = await watch.wait()
        #expect(result.status == 0, "\(result.diagnostics)")
    }

    /// Two devices' daemons watch their own folders pushing into one remote folder that
    /// keeps versions, and the same new name is written on both at the same moment: their
    /// runs for what the watcher saw (no walk of the tree) must lose neither version.
    @Test("two daemons send the same new name into a folder that keeps versions at the same moment: both versions stay")
    func twoDaemonsSameNewName() async throws {
        let work = Workspace()
        for device in ["a", "b"] {
            try TreeGenerator.write(at: work.directory.child(device) + "/old.jpg", size: 100, seed: 1,
                                    modified: Date().timeIntervalSince1970 - 60)
        }
        let config = work.directory.child("config.yml")
        try Data(("watch:\n  quiet_period: 500ms\n  stop_timeout: 5s\nremotes:\n  store:\n    type: local\n"
            + "    path: \(work.destination)\nfolders:\n"
            + ["a", "b"].map { "  \($0):\n    path: \($0)\n    remote: store\n    remote_path: shared\n    mode: push\n"
                + "    remote_rights: [read, write]\n" }.joined()).utf8).write(to: URL(fileURLWithPath: config))
        let daemons = try ["a", "b"].map { device in
            try FerryProcess(["watch", device, "--config", config, "--state", work.directory.child("state-" + device), "--json"],
                             in: work.directory.path)
        }
        defer { daemons.forEach { $0.stopIfRunning() } }
        @Sendable func summaries(_ daemon: FerryProcess) -> [[String: Any]] {
            daemon.outputSoFar.split(separator: "\n").compactMap { line in
                try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            }.filter { $0["event"] as? String == "summary" }
        }
        for daemon in daemons { await when({ summaries(daemon).count >= 1 }) }
        let started = daemons.map { summaries($0).count }

        for device in ["a", "b"] {
            try Data("same.jpg as device \(device) wrote it\n".utf8)
                .write(to: URL(fileURLWithPath: work.directory.child(device) + "/same.jpg"))
        }
        for (daemon, count) in zip(daemons, started) {
            await when({ summaries(daemon).dropFirst(count).contains { ($0["uploaded"] as? Int ?? 0) + ($0["conflicts"] as? Int ?? 0) > 0 } })
        }
        // Planned from what the watchers saw: the runs that sent skipped the older file.
        let sending = zip(daemons, started).compactMap { daemon, count in
            summaries(daemon).dropFirst(count).first { ($0["uploaded"] as? Int ?? 0) + ($0["conflicts"] as? Int ?? 0) > 0 }
        }
        #expect(sending.allSatisfy { $0["skipped"] as? Int == 0 }, "\(sending)")
        for daemon in daemons { daemon.send(SIGTERM) }
        for daemon in daemons {
            let result = await daemon.wait()
            #expect(result.status == 0, "\(result.diagnostics)")
        }
        var kept: [String] = []
        let root = work.destination + "/shared"
        for case let relative as String in FileManager.default.enumerator(atPath: root) ?? FileManager.DirectoryEnumerator() {
            guard let data = FileManager.default.contents(atPath: root + "/" + relative) else { continue }
            kept.append(String(decoding: data, as: UTF8.self))
        }
        for device in ["a", "b"] {
            #expect(kept.contains("same.jpg as device \(device) wrote it\n"), "device \(device)'s version is lost: \(kept)")
        }
    }

    @Test("a pull folder is polled: an unchanged remote costs two listings per poll, a new file is downloaded")
    func pullFolderPolls() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        let stored = server.directory + "/root/pulled"
        try FileManager.default.createDirectory(atPath: stored + "/2026", withIntermediateDirectories: true)
        try TreeGenerator.write(at: stored + "/2026/IMG_1.jpg", size: 10_000, seed: 7)
        let config = try Self.writeConfig(work, extra: """
              poll_interval: 300ms
            remotes:
              nas:
                type: webdav
                url: \(server.url("/dav/pulled"))
            folders:
              phone:
                path: dst
                remote: nas
                mode: pull

            """)
        let daemon = try FerryProcess(["daemon", "--config", config, "--state", work.state, "--json"], in: work.directory.path)
        defer { daemon.stopIfRunning() }
        await when({ Self.exists(work.destination + "/2026/IMG_1.jpg") })

        // Unchanged: each poll is a PROPFIND of the folder and one of its change markers'
        // folder (`.ferry-catalog/`, which nginx leaves out of the first), nothing else.
        // Waits for two more polls to be logged, however long a loaded machine takes.
        let before = server.accessLog.count
        await when({ server.accessLog.count - before >= 4 })
        let quiet = server.accessLog.dropFirst(before)
        #expect(quiet.count >= 4, "\(quiet)")
        #expect(quiet.allSatisfy { $0.hasPrefix("PROPFIND /dav/pulled/ ") || $0.hasPrefix("PROPFIND /dav/pulled/.ferry-catalog/ ") },
                "\(quiet)")

        try TreeGenerator.write(at: stored + "/IMG_2.jpg", size: 20_000, seed: 8)
        await when({ Self.exists(work.destination + "/IMG_2.jpg") })
        daemon.send(SIGTERM)
        let result = await daemon.wait()
        #expect(result.status == 0, "\(result.diagnostics)")
        #expect(Set(result.events(named: "transferred").compactMap { $0["path"] as? String }) == ["2026/IMG_1.jpg", "IMG_2.jpg"])
        #expect(try TreeComparison.differences(stored, work.destination, compareModificationTimes: false) == [])
    }

    @Test("ferry status lists a remote that went offline while watching; the file goes when it is back")
    func offlineRemoteInStatus() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try FileManager.default.createDirectory(atPath: work.source, withIntermediateDirectories: true)
        let config = try Self.writeConfig(work)
        let remote = "dav://" + server.origin.dropFirst("http://".count) + "/dav/offline"
        let watch = try FerryProcess(["watch", work.source, "--to", remote, "--state", work.state, "--config", config, "--json"],
                                     in: work.directory.path)
        defer { watch.stopIfRunning() }
        await when({ Self.exists(work.state + "/daemon-status.json") })
        try await onOwnThread { try server.stop() }
        try TreeGenerator.write(at: work.source + "/IMG_1.jpg", size: 5_000, seed: 1)
        let statusFile = work.state + "/daemon-status.json"
        await when({ ((try? String(contentsOfFile: statusFile, encoding: .utf8)) ?? "").contains("\"offline_remotes\":[{") })
        let status = try await work.ferry(["status", "--config", config, "--state", work.state])
        #expect(status.standardOutput.contains("offline since"), "\(status.diagnostics)")

        try await onOwnThread { try server.restart() }
        await when({ Self.exists(server.directory + "/root/offline/IMG_1.jpg") })
        await when({ ((try? String(contentsOfFile: statusFile, encoding: .utf8)) ?? "").contains("\"offline_remotes\":[]") })
        watch.send(SIGTERM)
        let result = await watch.wait()
        #expect(result.status == 0, "\(result.diagnostics)")
        #expect(result.events(named: "remote_offline").count >= 1)
        #expect(result.events(named: "remote_online").count >= 1)
    }

    @Test("the daemon shows its state in ferry status, keeps its config on a bad SIGHUP, takes a good one, and exits 0 on SIGTERM")
    func daemonStatusAndReload() async throws {
        let work = Workspace()
        try FileManager.default.createDirectory(atPath: work.source, withIntermediateDirectories: true)
        let folders = """
            remotes:
              backup:
                type: local
                path: dst
            folders:
              photos:
                path: src
                remote: backup
            schedule:
              - cron: "0 3 * * *"
                run: push photos
                queues: [archives]

            """
        let config = try Self.writeConfig(work, extra: folders)
        let daemon = try FerryProcess(["daemon", "--config", config, "--state", work.state, "--log-format", "json",
                                       "--log-level", "info"], in: work.directory.path)
        defer { daemon.stopIfRunning() }
        await when({ Self.exists(work.state + "/daemon-status.json") })
        try TreeGenerator.write(at: work.source + "/IMG_1.jpg", size: 5_000, seed: 3)
        await when({ Self.exists(work.destination + "/IMG_1.jpg") })

        let status = try await work.ferry(["status", "--config", config, "--state", work.state, "--json"])
        #expect(status.status == 0, "\(status.diagnostics)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any])
        let live = try #require(object["daemon"] as? [String: Any], "\(status.diagnostics)")
        #expect(live["command"] as? String == "daemon")
        #expect(live["pid"] as? Int == Int(daemon.processIdentifier))
        let folder = try #require((live["folders"] as? [[String: Any]])?.first)
        #expect(folder["name"] as? String == "photos")
        let schedule = try #require((live["schedules"] as? [[String: Any]])?.first)
        #expect(schedule["action"] as? String == "push photos (queues: archives)")
        #expect(schedule["next"] as? String != nil)
        let text = try await work.ferry(["status", "--config", config, "--state", work.state])
        #expect(text.standardOutput.contains("daemon running (pid \(daemon.processIdentifier)"), "\(text.diagnostics)")

        // A broken config: reported, the running one kept (the folder is still watched).
        try Data("watch:\n  quiet_period: soon\n".utf8).write(to: URL(fileURLWithPath: config))
        daemon.send(SIGHUP)
        await when({ daemon.errorSoFar.contains("config not reloaded") })
        #expect(daemon.errorSoFar.contains("config.yml:2:17"))
        try TreeGenerator.write(at: work.source + "/IMG_2.jpg", size: 5_000, seed: 4)
        await when({ Self.exists(work.destination + "/IMG_2.jpg") })

        // A valid config with a second folder: reloaded, and the new folder is watched.
        let withVideos = folders.replacingOccurrences(of: "folders:\n", with: "folders:\n  videos:\n    path: vids\n    remote: backup\n    remote_path: videos\n")
        try FileManager.default.createDirectory(atPath: work.directory.child("vids"), withIntermediateDirectories: true)
        try Data("watch:\n  quiet_period: 500ms\n\(withVideos)".utf8).write(to: URL(fileURLWithPath: config))
        daemon.send(SIGHUP)
        await when({ daemon.errorSoFar.contains("config reloaded") })
        await when({ ((try? String(contentsOfFile: work.state + "/daemon-status.json", encoding: .utf8)) ?? "").contains("\"videos\"") })
        try TreeGenerator.write(at: work.directory.child("vids/VID_1.mp4"), size: 5_000, seed: 5)
        await when({ Self.exists(work.destination + "/videos/VID_1.mp4") })

        daemon.send(SIGTERM)
        let result = await daemon.wait()
        #expect(result.status == 0, "\(result.diagnostics)")
        // JSON log lines on stderr.
        let logLines = result.standardError.split(separator: "\n")
        #expect(!logLines.isEmpty)
        #expect(logLines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil }, "\(result.diagnostics)")
        // The status file goes with the process.
        #expect(!Self.exists(work.state + "/daemon-status.json"))
    }
}
