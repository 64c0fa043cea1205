import FerryTestSupport
import Foundation
import Testing

/// Remotes that lie (docs/reliability.md, "Hostile remotes"): each case reproduces what a
/// hostile server or plugin did to Ferry before it was bounded, against a hostile fake
/// server on 127.0.0.1 (`scripts/test-servers/hostile-server.py`) or hostile files on a
/// local remote.
@Suite("hostile remotes", .integration)
struct HostileRemoteTests {
    /// Few, quick retries: a hostile answer is retryable, and the default backoff would
    /// spend 15 s on it.
    static let quickRetries = "retry:\n  attempts: 2\n  base_delay: 50ms\n  max_delay: 100ms\n"

    static func workspace(config: String = quickRetries) throws -> Workspace {
        let work = Workspace()
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        return work
    }

    // MARK: Item 7: a body longer than the listing said

    @Test("a download that passes its listed size is stopped: nothing under the final name, exit 1",
          arguments: [false, true])
    func oversizeBody(announced: Bool) async throws {
        let server = try await HostileServer("oversize", ["--listed", "5", "--body", "\(64 << 20)"]
            + (announced ? ["--with-length"] : []))
        let work = try Self.workspace()
        let run = try await work.ferry(["pull", work.destination, "--from", server.davURL("/dav/"), "--state", work.state])
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(run.standardError.contains("more than the 5 bytes expected"), "\(run.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: work.destination + "/big.bin"))
        // Whatever is left to continue from is within the listed size.
        for (name, info) in try TreeComparison.files(in: work.destination) {
            #expect(info.size <= 5, "\(name) holds \(info.size) bytes")
        }
    }

    // MARK: Item 3: concurrent uploads into new folders

    @Test("300 files into many new nested folders, 8 at a time: every file arrives, one MKCOL per folder, also where a second MKCOL in flight gets 409",
          arguments: TestServer.Kind.webDAV)
    func concurrentFolderCreation(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0, options: ["--mkcol-race", "0.05"])
        let work = try Self.workspace()
        for index in 0..<300 {
            try TreeGenerator.write(at: work.source + "/y\(index % 3)/m\(index % 12)/d\(index % 48)/f\(index).jpg",
                                    size: 200 + index, seed: UInt64(index))
        }
        let run = try await work.ferry(["push", work.source, "--to", "dav://" + proxy.origin.dropFirst("http://".count) + "/dav/new/",
                                        "--state", work.state, "--transfers", "8"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(try TreeComparison.differences(work.source, server.directory + "/root/new", compareModificationTimes: false,
                                               ignoringFolders: server.bookkeepingFolders).isEmpty)
        let mkcols = proxy.requests.filter { $0.hasPrefix("MKCOL ") }
        #expect(!mkcols.contains { $0.contains("race 409") }, "\(mkcols)")
        let folders = Dictionary(grouping: mkcols.map { String($0.split(separator: " ")[1]) }, by: { $0 })
        #expect(folders.keys.filter { $0.hasPrefix("/dav/new/y") }.count == 3 + 12 + 48, "\(mkcols)")
        for (folder, requests) in folders {
            // The first folder below a remote root that does not exist yet is asked again
            // once the root is made; every other folder once.
            let firstLevel = folder.dropFirst("/dav/new/".count).dropLast().contains("/") == false
            #expect(requests.count == 1 || (requests.count == 2 && firstLevel), "\(folder): \(requests.count) MKCOLs")
        }
    }
}
