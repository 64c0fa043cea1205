import FerryTestSupport
import Foundation
import Testing

@Suite("push and pull through plain HTTP servers", .integration)
struct HTTPPushPullTests {
    @Test("an ad-hoc http:// URL on nginx: push, push again (nothing sent), pull into an empty folder")
    func nginxAdHoc() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        let written = try await TreeGenerator.generate(at: work.source, .init(fileCount: 150, largeFileSizes: [9 << 20], seed: 41))
        let remote = server.url("/files/photos")

        let first = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(first.status == 0, "\(first.diagnostics)")
        #expect(first.int("uploaded") == written.count)
        // The ad-hoc URL got the http backend, which found MOVE and used temporary names.
        let log = server.accessLog
        #expect(log.contains { $0.hasPrefix("MOVE /files/photos/") })
        #expect(!log.contains { $0.hasPrefix("PROPFIND ") })

        let second = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(second.int("uploaded") == 0)
        #expect(second.int("skipped") == written.count)
        #expect(try TreeComparison.differences(work.source, server.directory + "/root/photos",
                                               compareModificationTimes: false) == [])
        #expect(try work.temporaryFiles(in: server.directory + "/root/photos") == [])

        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", remote, "--state", work.state, "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        // nginx's autoindex leaves hidden names (.thumbnails/) out of its pages; the push's
        // catalog of them brings them back to a pull into an empty folder.
        #expect(pull.int("downloaded") == written.count)
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: false) == [])
        #expect(try work.temporaryFiles(in: restored) == [])
    }

    @Test("a photo-server style remote (multipart POST, HTML index): push, push again, pull an identical tree")
    func uploadServer() async throws {
        let server = try await TestServer(.upload)
        let work = Workspace()
        let written = try await TreeGenerator.generate(at: work.source, .init(fileCount: 120, largeFileSizes: [9 << 20], seed: 42))
        let config = """
            remotes:
              photoserver:
                type: http
                url: \(server.url("/photos"))
                upload: post
                upload_url: \(server.url("/upload"))
                listing: html
            folders:
              photos:
                path: src
                remote: photoserver
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))

        let first = try await work.ferry(["push", "photos", "--state", work.state, "--json"])
        #expect(first.status == 0, "\(first.diagnostics)")
        #expect(first.int("uploaded") == written.count)
        #expect(server.accessLog.contains { $0.hasPrefix("POST /upload 201") })

        let second = try await work.ferry(["push", "photos", "--state", work.state, "--json"])
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(second.int("uploaded") == 0)
        #expect(second.int("skipped") == written.count)
        #expect(try TreeComparison.differences(work.source, server.directory + "/root/photos",
                                               compareModificationTimes: false) == [])

        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", "photoserver", "--state", work.state, "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == written.count)
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: false) == [])
        #expect(try work.temporaryFiles(in: restored) == [])
        #expect(try work.temporaryFiles(in: server.directory + "/root/photos") == [])
    }

    @Test("a push to a read-only http remote (upload: none) fails at once with exit 1 and says why")
    func readOnly() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/IMG_1.jpg", size: 1000, seed: 1)
        let config = """
            remotes:
              archive:
                type: http
                url: \(server.url("/html/archive"))
                upload: none
            folders:
              photos:
                path: src
                remote: archive
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let run = try await work.ferry(["push", "photos", "--state", work.state, "--json"])
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect((run.standardError + run.standardOutput).contains("read-only (upload: none)"), "\(run.diagnostics)")
        #expect(run.events(named: "retrying").isEmpty)
        #expect(run.int("uploaded") == 0)
        #expect(!server.accessLog.contains { !$0.hasPrefix("GET ") && !$0.hasPrefix("HEAD ") })
    }
}
