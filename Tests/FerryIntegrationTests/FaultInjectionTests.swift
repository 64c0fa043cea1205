import FerryTestSupport
import Foundation
import Testing

@Suite("push through a proxy that fails a share of requests", .integration)
struct FaultInjectionTests {
    @Test("500, 503 and dropped connections on 20% of requests: the result is still identical",
          arguments: TestServer.Kind.webDAV)
    func faultyServer(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0.2, seed: kind == .nginx ? 7 : 11)
        let work = Workspace()
        let written = try await TreeGenerator.generate(at: work.source, .init(fileCount: 60, largeFileSizes: [3 << 20], seed: 31))
        // Many quick retries: with one request in five failing, a file's few requests all
        // succeed together only about half the time.
        let config = """
            remotes:
              flaky:
                type: webdav
                url: \(proxy.origin)/dav/photos
            folders:
              photos:
                path: src
                remote: flaky
            retry:
              attempts: 25
              base_delay: 10ms
              factor: 2
              max_delay: 80ms
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))

        let push = try await work.ferry(["push", "photos", "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        #expect(push.int("uploaded") == written.count)
        #expect(!push.events(named: "retrying").isEmpty, "no fault was injected")
        #expect(try TreeComparison.differences(work.source, server.directory + "/root/photos",
                                               compareModificationTimes: false, ignoringFolders: server.bookkeepingFolders) == [])
        #expect(try work.temporaryFiles(in: server.directory + "/root/photos") == [])

        let again = try await work.ferry(["push", "photos", "--state", work.state, "--json"])
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(again.int("uploaded") == 0)
    }

    /// 50 files in five folders; every fifth file (`IMG_xx0.jpg`, `IMG_xx5.jpg`) is flaky.
    static func writeTree(at root: String) throws -> [String] {
        try (0..<50).map { index in
            let path = String(format: "day%d/IMG_%03d.jpg", index % 5, index)
            try TreeGenerator.write(at: root + "/" + path, size: 8_000 + index * 97, seed: UInt64(index + 1))
            return path
        }
    }

    /// The upload of a flaky file: its PUT to its temporary name (nginx takes no ranged PUT,
    /// so every attempt sends one).
    static let flakyPut = #"^PUT /dav/photos/day\d/\.IMG_\d\d[05]\.jpg\.ferry-part$"#

    /// 3 attempts a pass, quick backoff, `passes` (3) left at its default.
    static func config(_ proxy: FaultProxy) -> String {
        """
        remotes:
          flaky:
            type: webdav
            url: \(proxy.origin)/dav/photos
            # Every attempt to the temporary name, so the scripted faults meet each one.
            direct_put: "off"
        folders:
          photos:
            path: src
            remote: flaky
        retry:
          attempts: 3
          base_delay: 10ms
          factor: 2
          max_delay: 80ms
        """
    }

    @Test("a fifth of the files fail their first 7 uploads (500, 503, reset, cut reply): later passes finish the run, exit 0")
    func transientFailuresRetriedInLaterPasses() async throws {
        let server = try await TestServer(.nginx)
        // Per file, not per request order: each flaky file gets exactly these faults whatever
        // the concurrency, 7 of the 9 attempts its 3 passes allow (one pass has 3).
        let proxy = try await FaultProxy(upstream: server.origin, share: 0,
                                         options: ["--path-script", Self.flakyPut + "=500,503,reset,lost,500,503,reset"])
        let work = Workspace()
        let paths = try Self.writeTree(at: work.source)
        try Data(Self.config(proxy).utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))

        let push = try await work.ferry(["push", "photos", "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        #expect(push.int("uploaded") == paths.count)
        #expect(push.int("failed") == 0)
        // Each flaky file was set aside twice, and went in the third pass.
        let flaky = paths.filter { $0.hasSuffix("0.jpg") || $0.hasSuffix("5.jpg") }
        let setAside = push.events(named: "retrying").filter { ($0["error"] as? String)?.contains("tried again after the other files") == true }
        #expect(setAside.count == flaky.count * 2, "\(push.diagnostics)")
        let puts = proxy.requests.filter { $0.hasPrefix("PUT ") && $0.contains(".ferry-part ") }
        for path in flaky {
            let name = (path as NSString).lastPathComponent
            #expect(puts.filter { $0.contains("/.\(name).ferry-part ") }.count == 8, "\(path)")
        }
        #expect(try TreeComparison.differences(work.source, server.directory + "/root/photos",
                                               compareModificationTimes: false, ignoringFolders: server.bookkeepingFolders) == [])
        #expect(try work.temporaryFiles(in: server.directory + "/root/photos") == [])
        withExtendedLifetime(proxy) {}
    }

    @Test("a 403 fails its file at once, in the first pass, beside files that needed later passes")
    func permanentFailureNotRetried() async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0, options: [
            "--path-script", #"^PUT /dav/photos/day0/\.IMG_000\.jpg\.ferry-part$=403"#,
            "--path-script", Self.flakyPut + "=500,503,reset,500",
        ])
        let work = Workspace()
        let paths = try Self.writeTree(at: work.source)
        try Data(Self.config(proxy).utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))

        let push = try await work.ferry(["push", "photos", "--state", work.state, "--json"])
        #expect(push.status == 1, "\(push.diagnostics)")
        #expect(push.int("uploaded") == paths.count - 1)
        #expect(push.int("failed") == 1)
        let failed = push.events(named: "failed")
        #expect(failed.map { $0["path"] as? String } == ["day0/IMG_000.jpg"], "\(push.diagnostics)")
        #expect(failed.first?["attempt"] as? Int == 1)
        #expect(push.events(named: "retrying").allSatisfy { $0["path"] as? String != "day0/IMG_000.jpg" })
        #expect(proxy.requests.filter { $0.hasPrefix("PUT /dav/photos/day0/.IMG_000.jpg.ferry-part ") } == [
            "PUT /dav/photos/day0/.IMG_000.jpg.ferry-part 403",
        ])
        withExtendedLifetime(proxy) {}
    }
}
