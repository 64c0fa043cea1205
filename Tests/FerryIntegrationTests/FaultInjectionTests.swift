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
        let written = try TreeGenerator.generate(at: work.source, .init(fileCount: 60, largeFileSizes: [3 << 20], seed: 31))
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
}
