import FerryTestSupport
import Foundation
import Testing

@Suite("push and pull through real WebDAV servers", .integration)
struct WebDAVPushPullTests {
    @Test("push, push again (nothing sent), pull into an empty folder with a fresh state: identical bytes, hidden names included",
          arguments: TestServer.Kind.webDAV)
    func pushPushPull(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        let work = Workspace()
        let written = try await TreeGenerator.generate(at: work.source, .init(fileCount: 150, largeFileSizes: [9 << 20], seed: 21))
        let remote = "dav://" + server.origin.dropFirst("http://".count) + "/dav/photos"

        let first = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(first.status == 0, "\(first.diagnostics)")
        #expect(first.int("uploaded") == written.count)

        let second = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(second.int("uploaded") == 0)
        #expect(second.int("skipped") == written.count)
        #expect(try TreeComparison.differences(work.source, server.directory + "/root/photos",
                                               compareModificationTimes: false, ignoringFolders: server.bookkeepingFolders) == [])

        // nginx's WebDAV module leaves hidden names (.thumbnails/) out of its listings; the
        // push kept a catalog of them on the remote, so a restore with a fresh state (no
        // journal to hint at them) still finds every file.
        #expect(written.contains { $0.hasPrefix(".") || $0.contains("/.") }, "the tree has no hidden names to test with")
        let restored = work.directory.child("restored")
        let freshState = work.directory.child("fresh-state")
        let pull = try await work.ferry(["pull", restored, "--from", remote, "--state", freshState, "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == written.count)
        // WebDAV servers keep their own modification times, so only the bytes are compared.
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: false) == [])
        #expect(try work.temporaryFiles(in: restored) == [])
        #expect(try work.temporaryFiles(in: server.directory + "/root/photos") == [])
    }

    @Test("a wrong password fails at once with exit 2 (configuration) and 'check credentials', without retrying", arguments: TestServer.Kind.webDAV)
    func wrongPassword(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/IMG_1.jpg", size: 1000, seed: 1)
        let config = """
            remotes:
              nas:
                type: webdav
                url: \(server.url("/private/photos"))
                user: ferry
                password_env: FERRY_TEST_PASSWORD
            folders:
              photos:
                path: src
                remote: nas
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let run = try await FerryProcess.run(["push", "photos", "--state", work.state, "--json"], in: work.directory.path,
                                             environment: ["FERRY_TEST_PASSWORD": "not-the-password"])
        #expect(run.status == 2, "\(run.diagnostics)")
        #expect((run.standardError + run.standardOutput).contains("check this remote's user and password or bearer token"))
        #expect(!(run.standardError + run.standardOutput).contains("not-the-password"))
        #expect(run.events(named: "retrying").isEmpty)
        let requests = server.accessLog.count
        #expect(requests < 10, "\(requests) requests for one refused file")

        let good = try await FerryProcess.run(["push", "photos", "--state", work.state, "--json"], in: work.directory.path,
                                              environment: ["FERRY_TEST_PASSWORD": "secret"])
        #expect(good.status == 0, "\(good.diagnostics)")
        #expect(good.int("uploaded") == 1)
    }

    @Test("insecure: true works but warns on every run, naming the server and the safer option")
    func insecureWarns() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/IMG_1.jpg", size: 1000, seed: 1)
        let config = """
            remotes:
              nas:
                type: webdav
                url: \(server.url("/dav/photos"))
                insecure: true
            folders:
              photos:
                path: src
                remote: nas
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        for _ in 0..<2 {
            let run = try await work.ferry(["push", "photos", "--state", work.state, "--json"])
            #expect(run.status == 0, "\(run.diagnostics)")
            #expect(run.standardError.contains("TLS verification is off"), "\(run.diagnostics)")
            #expect(run.standardError.contains(server.origin) && run.standardError.contains("ca_file"))
        }
    }
}
