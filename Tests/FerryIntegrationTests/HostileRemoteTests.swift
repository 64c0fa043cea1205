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
}
