import FerryTestSupport
import Foundation
import Synchronization
import Testing

@Suite("a WebDAV server that goes away in the middle of a push", .integration)
struct OutageTests {
    func config(_ server: TestServer, offlineWait: String) -> String {
        """
        remotes:
          nas:
            type: webdav
            url: \(server.url("/dav/photos"))
            connect_timeout: 2
        folders:
          photos:
            path: src
            remote: nas
        retry:
          attempts: 3
          base_delay: 200ms
          max_delay: 1s
          offline_wait: \(offlineWait)
        """
    }

    @Test("stopped for 3 s: the remote goes offline, nothing fails, and the push completes when it is back",
          arguments: TestServer.Kind.webDAV)
    func serverComesBack(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        let work = Workspace()
        for index in 0..<30 {
            try TreeGenerator.write(at: work.source + "/day \(index / 10)/IMG_\(index).jpg", size: 256 * 1024,
                                    seed: UInt64(index), modified: 1_700_000_000 + Double(index))
        }
        // The wait is a guard against a server that never returns, not a bound on how soon it
        // does: at a load of 35 on two cores, 2m was outlasted before the restart.
        try Data(config(server, offlineWait: "30m").utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        // The bandwidth limit keeps the push going long enough to lose its server half-way.
        let running = try FerryProcess(["push", "photos", "--state", work.state, "--json", "--bwlimit", "1M"],
                                       in: work.directory.path)
        // Stop the server a few files in; start it again once the push has noticed, and at
        // least 3 s later. All on the polling thread, so that the moments hold under load.
        let restartError = Mutex<String?>(nil)
        await when({ running.outputSoFar.components(separatedBy: "\"event\":\"transferred\"").count > 3 }, do: {
            do {
                try server.stop()
                sleep(3)
                for _ in 0..<30_000 where !running.outputSoFar.contains("\"event\":\"remote_offline\"") { usleep(10_000) }
                try server.restart()
            } catch {
                restartError.withLock { $0 = "\(error)" }
            }
        })
        #expect(restartError.withLock { $0 } == nil)
        let result = await running.wait()

        #expect(result.status == 0, "\(result.diagnostics)")
        #expect(result.int("uploaded") == 30)
        #expect(result.int("failed") == 0)
        #expect(!result.events(named: "remote_offline").isEmpty, "the outage was not noticed: \(result.diagnostics)")
        #expect(!result.events(named: "remote_online").isEmpty)
        // Waiting for the server used up no file's attempts: no file failed for good.
        #expect(result.events(named: "failed").isEmpty)
        // Exit 0 with other bytes on the server is the worst loss there is (seen once on a
        // loaded machine, issue 49): a difference prints what the run said of each file.
        // Apache stopped mid-PUT may have been killed (stop.sh sends KILL to a server still up
        // 5 s after TERM, which a loaded machine makes happen) and left its `.davfs.tmp…` file:
        // the server's, not the user's, and ignored by Ferry. It once made this test fail
        // with every file right (issue 49).
        let differences = try TreeComparison.differences(work.source, server.directory + "/root/photos",
                                                         compareModificationTimes: false, ignoringFolders: server.bookkeepingFolders,
                                                         ignoringNamePrefixes: server.leftoverNamePrefixes)
        let paths = (0..<30).map { "day \($0 / 10)/IMG_\($0).jpg" }
        let told = differences.map { difference in
            let named = paths.filter { difference.contains($0 + " ") || difference.hasSuffix($0) }
            let lines = result.standardOutput.split(separator: "\n").filter { line in named.contains { line.contains($0) } }
            return difference + "\n    " + lines.joined(separator: "\n    ")
        }
        #expect(differences == [], "\(told.joined(separator: "\n"))\nstderr: \(result.standardError.suffix(4000))")
        #expect(try work.temporaryFiles(in: server.directory + "/root/photos") == [])
    }

    @Test("the file a killed Apache leaves of an unfinished PUT (.davfs.tmp…) is neither pulled nor deleted")
    func apacheLeftoverIsIgnored() async throws {
        let server = try await TestServer(.apache)
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/day 0/IMG_1.jpg", size: 4096, seed: 1)
        let remote = "dav://" + server.origin.dropFirst("http://".count) + "/dav/photos"
        #expect(try await work.ferry(["push", work.source, "--to", remote, "--state", work.state]).status == 0)
        // As mod_dav_fs names it (apr_file_mktemp on ".davfs.tmpXXXXXX"); Apache leaves it out of
        // its listings, so Ferry never sees it, but only a server's own test shows that.
        let leftover = server.directory + "/root/photos/day 0/.davfs.tmp0a3959"
        try Data(repeating: 7, count: 983_040).write(to: URL(fileURLWithPath: leftover))

        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", remote, "--state", work.directory.child("fresh"), "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == 1)
        #expect(try TreeComparison.files(in: restored).keys.sorted() == ["day 0/IMG_1.jpg"])
        let mirror = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--delete", "--json"])
        #expect(mirror.status == 0, "\(mirror.diagnostics)")
        #expect(mirror.events(named: "deleted").isEmpty)
        #expect(FileManager.default.fileExists(atPath: leftover))
    }

    @Test("still down after offline_wait: exit 1 with a message that says what to do, files stay queued")
    func serverStaysAway() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        for index in 0..<12 {
            try TreeGenerator.write(at: work.source + "/IMG_\(index).jpg", size: 256 * 1024, seed: UInt64(index))
        }
        try Data(config(server, offlineWait: "2s").utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let running = try FerryProcess(["push", "photos", "--state", work.state, "--json", "--bwlimit", "256k"],
                                       in: work.directory.path)
        await when({ running.outputSoFar.contains("\"event\":\"transferred\"") }, do: { try? server.stop() })
        let result = await running.wait()
        #expect(result.status == 1, "\(result.diagnostics)")
        let failures = result.events(named: "failed")
        #expect(!failures.isEmpty)
        #expect(failures.allSatisfy { ($0["error"] as? String)?.contains("run again when the server is back") == true
                                      || ($0["error"] as? String)?.contains("reach") == true },
                "\(failures)")
        let sent = result.int("uploaded") ?? 0
        #expect(sent < 12)

        // The queued files are still jobs, not errors, and the next run sends exactly them.
        let status = try await work.ferry(["status", "--state", work.state, "--json"])
        #expect(!status.standardOutput.contains("\"syncError\""), "\(status.standardOutput)")
        try await onOwnThread { try server.restart() }
        let again = try await work.ferry(["push", "photos", "--state", work.state, "--json"])
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect((again.int("uploaded") ?? 0) + sent == 12)
        #expect(try TreeComparison.differences(work.source, server.directory + "/root/photos",
                                               compareModificationTimes: false, ignoringFolders: server.bookkeepingFolders) == [])
    }

    @Test("a folder whose remote is offline does not hold up a folder on another remote")
    func otherRemotesKeepWorking() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        // `away` holds 8 MiB: at 1 MB/s it cannot end before the server is stopped after its
        // first file unless this test's polling thread is starved for 8 s. With 2 MiB, two
        // fresh-clone suites and a CPU burner on two cores once starved it for 2.
        for index in 0..<16 {
            try TreeGenerator.write(at: work.source + "/IMG_\(index).jpg", size: 512 * 1024, seed: UInt64(index))
        }
        for index in 0..<8 {
            try TreeGenerator.write(at: work.directory.child("local-src") + "/GPX_\(index).gpx", size: 400 * 1024,
                                    seed: UInt64(100 + index))
        }
        let config = """
            remotes:
              nas:
                type: webdav
                url: \(server.url("/dav/photos"))
                connect_timeout: 2
              disk:
                type: local
                path: local-dst
            folders:
              away:
                path: src
                remote: nas
              here:
                path: local-src
                remote: disk
            retry:
              attempts: 3
              base_delay: 200ms
              max_delay: 1s
              offline_wait: 30m
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        // 1 MB/s per folder: `here` needs about 3 s, `away` about 8 and loses its server after one file.
        // `here` finishes while `away` waits for its server (offline, or still failing to
        // reach it); only then does the server return. The whole sequence runs on the
        // polling thread, and `away` waits up to 30 minutes for its server: under a full-suite
        // load `here` was seen ending 30 s after the stop (it started late), and at a load of
        // 35 (two suites and a CPU burner on two cores) 190 s and more, past offline_wait: 5m.
        // The wait is a guard: the server returns the moment `here` has ended.
        let running = try FerryProcess(["push", "--state", work.state, "--json", "--bwlimit", "1M"], in: work.directory.path)
        let seenBeforeHereEnded = Mutex<String>("")
        let restartProblem = Mutex<String?>(nil)
        await when({ Self.line(in: running.outputSoFar, with: ["\"event\":\"transferred\"", "\"folder\":\"away\""]) != nil }, do: {
            do {
                try server.stop()
                for _ in 0..<150_000 where Self.summaryLine(of: "here", in: running.outputSoFar) == nil { usleep(10_000) }
                let output = running.outputSoFar
                if let summary = Self.summaryLine(of: "here", in: output), let range = output.range(of: summary) {
                    seenBeforeHereEnded.withLock { $0 = String(output[..<range.lowerBound]) }
                }
                try server.restart()
            } catch {
                restartProblem.withLock { $0 = "\(error)" }
            }
        })
        let result = await running.wait()
        #expect(restartProblem.withLock { $0 } == nil)
        let before = seenBeforeHereEnded.withLock { $0 }
        // `away` comes first in config.yml and cannot end while its server is stopped: run
        // one after the other, `here` would not have ended before the restart.
        #expect(Self.summaryLine(of: "away", in: before) == nil, "away ended before here: \(result.diagnostics)")
        #expect(before.contains("\"folder\":\"away\""), "away had not started when here ended: \(result.diagnostics)")
        #expect(result.status == 0, "\(result.diagnostics)")
        #expect(try TreeComparison.differences(work.directory.child("local-src"), work.directory.child("local-dst")) == [])
        #expect(try TreeComparison.differences(work.source, server.directory + "/root/photos",
                                               compareModificationTimes: false, ignoringFolders: server.bookkeepingFolders) == [])
    }

    static func summaryLine(of folder: String, in output: String) -> String? {
        line(in: output, with: ["\"event\":\"summary\"", "\"folder\":\"\(folder)\""])
    }

    /// The first line of `output` that contains every one of `parts`.
    static func line(in output: String, with parts: [String]) -> String? {
        output.split(separator: "\n").first { line in parts.allSatisfy { line.contains($0) } }.map(String.init)
    }

    /// Found by the soak suite (docs/reliability.md, bug 3), replayed exactly.
    @Test("a MOVE whose answer is lost, then an offline spell: the file is found in place, not sent again, no temporary file left")
    func lostMoveThenOffline() async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0, options: [
            "--script", "MOVE=lost,500", "--script", "PROPFIND=ok,ok,reset,lost,reset",
        ])
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/photo.webp", size: 52_030, seed: 3)
        let config = """
            remotes:
              nas:
                type: webdav
                url: \(proxy.origin)/dav/t
            folders:
              photos:
                path: src
                remote: nas
            retry:
              attempts: 30
              base_delay: 100ms
              max_delay: 500ms
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let push = try await work.ferry(["push", "photos", "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        #expect(push.int("uploaded") == 1)
        #expect(try TreeComparison.differences(work.source, server.directory + "/root/t", compareModificationTimes: false) == [])
        #expect(try work.temporaryFiles(in: server.directory + "/root/t") == [], "\(push.diagnostics)")
    }

    @Test("a pull whose first look at its remote folder gets a 503 asks again and restores every file")
    func pullRetriesFirstLook() async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0, options: ["--script", "PROPFIND=503"])
        let work = Workspace()
        for index in 0..<3 { try TreeGenerator.write(at: work.source + "/IMG_\(index).jpg", size: 2_000, seed: UInt64(index)) }
        try Data(config(server, offlineWait: "1m").utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        #expect(try await work.ferry(["push", "photos", "--state", work.state]).status == 0)

        let flaky = "dav://" + proxy.origin.dropFirst("http://".count) + "/dav/photos"
        let pull = try await work.ferry(["pull", "restored", "--from", flaky, "--state", work.directory.child("fresh"), "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        let first = try #require(proxy.requests.first)
        #expect(first.hasPrefix("PROPFIND ") && first.hasSuffix(" 503"), "\(proxy.requests)")
        #expect(try TreeComparison.differences(work.source, work.directory.child("restored"), compareModificationTimes: false) == [])
    }

    @Test("a transfer that stalls is aborted after stall_timeout and sent again, without waiting for the server")
    func stalledUploadIsRetried() async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0, options: ["--script", "PUT=stall"])
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/VID_1.mp4", size: 300_000, seed: 5)
        let config = """
            remotes:
              nas:
                type: webdav
                url: \(proxy.origin)/dav/s
                stall_timeout: 2
            folders:
              photos:
                path: src
                remote: nas
            retry:
              base_delay: 100ms
              max_delay: 500ms
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let push = try await work.ferry(["push", "photos", "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        #expect(push.int("uploaded") == 1)
        // Aborted by the stall timeout (the error says "stalled"), not by the proxy giving
        // up after 60 s (that would be a reset). No bound on the time: under a loaded
        // machine it says nothing about Ferry.
        let retries = push.events(named: "retrying")
        #expect(retries.count == 1 && (retries.first?["error"] as? String)?.contains("stalled") == true, "\(retries)")
        #expect(try TreeComparison.differences(work.source, server.directory + "/root/s", compareModificationTimes: false) == [])
    }
}
