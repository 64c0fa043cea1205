import FerryTestSupport
import Foundation
import Testing

/// What the WebDAV server probe changes for a whole run: modification times, resumed
/// uploads, and how secrets stay out of everything ferry prints.
@Suite("WebDAV server features through the ferry command")
struct WebDAVServerFeatureRunTests {
    func davURL(_ server: TestServer, _ path: String) -> String {
        "dav://" + server.origin.dropFirst("http://".count) + path
    }

    @Test("Apache: push then pull into an empty folder restores every mtime to the nanosecond; a new journal finds nothing to send")
    func apacheModificationTimesRoundTrip() async throws {
        let server = try TestServer(.apache)
        let work = Workspace()
        let written = try TreeGenerator.generate(at: work.source, .init(fileCount: 40, seed: 31))
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

    @Test("ferry plugins --probe reports what each server supports", arguments: TestServer.Kind.allCases)
    func probeCommand(_ kind: TestServer.Kind) async throws {
        let server = try TestServer(kind)
        let work = Workspace()
        let run = try await work.ferry(["plugins", "--probe", davURL(server, "/dav/probe"), "--json"])
        #expect(run.status == 0, "\(run.diagnostics)")
        let report = try #require(run.events.first)
        let capabilities = report["capabilities"] as? [String] ?? []
        switch kind {
        case .apache:
            #expect(capabilities.contains("resumable-upload") && capabilities.contains("mtime"), "\(capabilities)")
            #expect(report["ranged_put"] as? String == "yes")
        case .nginx:
            #expect(!capabilities.contains("resumable-upload") && !capabilities.contains("mtime"), "\(capabilities)")
            #expect(report["ranged_put"] as? String == "no (HTTP 501 on a ranged PUT)")
        }
        #expect(try TreeComparison.files(in: server.directory + "/root").keys.filter { $0.contains("ferry-probe") } == [])
    }

    @Test("a wrong digest password or bearer token fails at once, and no secret is printed, even with -vv",
          arguments: [("apache", "/digest/photos", "digest"), ("nginx", "/bearer/photos", "bearer")])
    func wrongSecret(server kind: String, path: String, auth: String) async throws {
        let server = try TestServer(kind == "apache" ? .apache : .nginx)
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
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect((run.standardError + run.standardOutput).contains("check the user and password"))
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
