import FerryTestSupport
import Foundation
import Testing

/// What the WebDAV server probe changes for a whole run: modification times, resumed
/// uploads, and how secrets stay out of everything ferry prints.
@Suite("WebDAV server features through the ferry command", .integration)
struct WebDAVServerFeatureRunTests {
    func davURL(_ server: TestServer, _ path: String) -> String {
        "dav://" + server.origin.dropFirst("http://".count) + path
    }

    @Test("Apache: push then pull into an empty folder restores every mtime to the nanosecond; a new journal finds nothing to send")
    func apacheModificationTimesRoundTrip() async throws {
        let server = try await TestServer(.apache)
        let work = Workspace()
        let written = try await TreeGenerator.generate(at: work.source, .init(fileCount: 40, seed: 31))
        let remote = davURL(server, "/dav/photos")

        let push = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        #expect(push.int("uploaded") == written.count)

        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", remote, "--state", work.directory.child("state2"), "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == written.count)
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: true) == [])

        // Without any journal, the remote's sizes and mtimes alone show the tree is there.
        let fresh = try await work.ferry(["push", work.source, "--to", remote, "--state", work.directory.child("state3"), "--json"])
        #expect(fresh.status == 0, "\(fresh.diagnostics)")
        #expect(fresh.int("uploaded") == 0)
        #expect(fresh.int("skipped") == written.count)
    }

    @Test("Apache: kill -9 in the middle of a large file; the next push continues it from what the server kept")
    func apacheKillResumes() async throws {
        let server = try await TestServer(.apache)
        let work = Workspace()
        let size = 24 << 20
        try TreeGenerator.write(at: work.source + "/VID_0001.mp4", size: size, seed: 78, modified: 1_700_000_000.25)
        let config = """
            remotes:
              apache:
                type: webdav
                url: \(server.url("/dav/photos"))
                upload_chunk_size: 4M
            folders:
              photos:
                path: src
                remote: apache
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let partial = server.directory + "/root/photos/.VID_0001.mp4.ferry-part"
        let running = try FerryProcess(["push", "photos", "--state", work.state, "--json", "--bwlimit", "2M"],
                                       in: work.directory.path)
        // Two chunks of 4 MiB done and the third under way.
        let reached = await Self.kill(running) {
            ((try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? NSNumber)?.intValue ?? 0) > 9 << 20
        }
        _ = await running.wait()
        #expect(reached, "the partial file did not grow past 9 MiB")
        #expect(!FileManager.default.fileExists(atPath: server.directory + "/root/photos/VID_0001.mp4"))

        let resumed = try await FerryProcess.run(["push", "photos", "--state", work.state, "--json"], in: work.directory.path)
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        let event = try #require(resumed.events(named: "transferred").first)
        let resumedFrom = (event["resumed_from"] as? NSNumber)?.intValue ?? 0
        let sent = (event["bytes"] as? NSNumber)?.intValue ?? 0
        #expect(resumedFrom >= 8 << 20, "resumed from \(resumedFrom)")
        #expect(resumedFrom + sent == size)
        // The server's files have the server's mtimes; Ferry's mtime is a property beside them.
        #expect(try TreeComparison.differences(work.source, server.directory + "/root/photos", compareModificationTimes: false,
                                               ignoringFolders: server.bookkeepingFolders) == [])
    }

    /// Kills the process with SIGKILL as soon as `condition` holds, from `when`'s own
    /// thread (a kill sent from the test's task came seconds late under load), and says
    /// whether it did.
    static func kill(_ process: FerryProcess, when condition: @escaping @Sendable () -> Bool) async -> Bool {
        await FerryIntegrationTests.when(condition, do: { process.killHard() })
    }

    @Test("nginx: the next push from the same state folder sends no probe; --full, another state folder and plugins --probe do")
    func probeRememberedInStateFolder() async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let work = Workspace()
        let remote = "dav://" + proxy.origin.dropFirst("http://".count) + "/dav/remembered"
        func probes(since mark: Int) -> [String] { proxy.requests.dropFirst(mark).filter { $0.contains(".ferry-probe") } }

        try TreeGenerator.write(at: work.source + "/DCIM/IMG_1.jpg", size: 4096, seed: 1)
        var mark = proxy.requests.count
        let first = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(first.status == 0, "\(first.diagnostics)")
        #expect(!probes(since: mark).isEmpty)
        let kept = try FileManager.default.contentsOfDirectory(atPath: work.state + "/servers")
        #expect(kept.count == 1, "\(kept)")

        // New photos the next day, the same state folder: uploaded as before, no probe file written.
        try TreeGenerator.write(at: work.source + "/DCIM/IMG_2.jpg", size: 4096, seed: 2)
        mark = proxy.requests.count
        let second = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(second.int("uploaded") == 1)
        let sent = Array(proxy.requests.dropFirst(mark))
        #expect(probes(since: mark).isEmpty, "\(sent)")
        #expect(sent.contains { $0.hasPrefix("PUT /dav/remembered/DCIM/IMG_2.jpg") } && !sent.contains { $0.hasPrefix("MOVE") },
                "one PUT to the name, as the remembered atomic PUT allows: \(sent)")

        // --full trusts nothing it kept: the server is probed again.
        try TreeGenerator.write(at: work.source + "/DCIM/IMG_3.jpg", size: 4096, seed: 3)
        mark = proxy.requests.count
        let full = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--full", "--json"])
        #expect(full.status == 0, "\(full.diagnostics)")
        #expect(full.int("uploaded") == 1)
        #expect(!probes(since: mark).isEmpty, "--full probes again")

        try TreeGenerator.write(at: work.source + "/DCIM/IMG_4.jpg", size: 4096, seed: 4)
        mark = proxy.requests.count
        let other = try await work.ferry(["push", work.source, "--to", remote, "--state", work.directory.child("state2"), "--json"])
        #expect(other.status == 0, "\(other.diagnostics)")
        #expect(!probes(since: mark).isEmpty, "another state folder knows nothing of the server")

        mark = proxy.requests.count
        let probe = try await work.ferry(["plugins", "--probe", remote, "--json"])
        #expect(probe.status == 0, "\(probe.diagnostics)")
        #expect(!probes(since: mark).isEmpty, "ferry plugins --probe asks the server")
        #expect(try TreeComparison.files(in: server.directory + "/root").keys.filter { $0.contains("ferry-probe") } == [])
    }

    @Test("ferry plugins --probe reports what each server supports", arguments: TestServer.Kind.webDAV)
    func probeCommand(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        let work = Workspace()
        let run = try await work.ferry(["plugins", "--probe", davURL(server, "/dav/probe"), "--json"])
        #expect(run.status == 0, "\(run.diagnostics)")
        let report = try #require(run.events.first)
        let capabilities = report["capabilities"] as? [String] ?? []
        let devices = report["several_devices"] as? [String: Any] ?? [:]
        #expect((devices["new_names"] as? String)?.contains("Overwrite: F") == true, "\(devices)")
        #expect((devices["replaced_versions"] as? String)?.contains("moved aside") == true, "\(devices)")
        #expect((devices["changes_from_other_devices"] as? String)?.contains("change markers") == true, "\(devices)")
        // The server looks at the name before it renames: two MOVEs at once can both pass.
        #expect((devices["write_lease"] as? String)?.contains(".ferry-catalog/WRITER.lease") == true, "\(devices)")
        #expect(report["atomic_put"] as? String == "yes")
        switch kind {
        case .apache:
            #expect(capabilities.contains("resumable-upload") && capabilities.contains("mtime"), "\(capabilities)")
            #expect(report["ranged_put"] as? String == "yes")
        case .nginx:
            #expect(!capabilities.contains("resumable-upload") && !capabilities.contains("mtime"), "\(capabilities)")
            #expect(report["ranged_put"] as? String == "no (HTTP 501 on a ranged PUT)")
        case .upload:
            Issue.record("the upload server is not a WebDAV server")
        }
        #expect(try TreeComparison.files(in: server.directory + "/root").keys.filter { $0.contains("ferry-probe") } == [])
    }

    @Test("a wrong digest password or bearer token fails at once, and no secret is printed, even with -vv",
          arguments: [("apache", "/digest/photos", "digest"), ("nginx", "/bearer/photos", "bearer")])
    func wrongSecret(server kind: String, path: String, auth: String) async throws {
        let server = try await TestServer(kind == "apache" ? .apache : .nginx)
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/IMG_1.jpg", size: 2 << 20, seed: 1)
        let credentials = auth == "bearer"
            ? "auth: bearer\n    token_env: FERRY_TEST_SECRET"
            : "auth: digest\n    user: ferry\n    password_env: FERRY_TEST_SECRET"
        let config = """
            remotes:
              nas:
                type: webdav
                url: \(server.url(path))
                \(credentials)
            folders:
              photos:
                path: src
                remote: nas
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let wrong = "wrong-Secret-\(UInt32.random(in: 0...UInt32.max))"
        let run = try await FerryProcess.run(["push", "photos", "--state", work.state, "--json", "-vv"], in: work.directory.path,
                                             environment: ["FERRY_TEST_SECRET": wrong])
        #expect(run.status == 2, "\(run.diagnostics)")
        #expect((run.standardError + run.standardOutput).contains("check this remote's user and password or bearer token"))
        #expect(!(run.standardError + run.standardOutput).contains(wrong))
        #expect(run.events(named: "retrying").isEmpty)

        let right = auth == "bearer" ? try String(contentsOfFile: server.directory + "/bearer-token", encoding: .utf8) : "secret"
        let good = try await FerryProcess.run(["push", "photos", "--state", work.state, "--json", "-vv"], in: work.directory.path,
                                              environment: ["FERRY_TEST_SECRET": right])
        #expect(good.status == 0, "\(good.diagnostics)")
        #expect(good.int("uploaded") == 1)
        #expect(!(good.standardError + good.standardOutput).contains(right))
    }
}
