import FerryTestSupport
import Foundation
import Testing

/// Two copies with the same size and the same modification time are not proof of the same
/// content (two edits within one clock tick, `exiftool -P`). Where no sync vouched for them,
/// Ferry compares the bytes before it records them as in sync (issue 12, case 4).
@Suite("look-alike copies: same size and time, compared by content", .integration)
struct LookAlikeCopyTests {
    /// One modification time for both sides, to the nanosecond.
    static let sharedTime = 1_700_003_000.25

    /// The remote end: a local folder, or a folder on nginx (whose listing keeps whole
    /// seconds, so the two times match at that precision).
    struct Remote {
        let server: TestServer?
        let work: Workspace
        var directory: String { server.map { $0.directory + "/root/phone" } ?? work.destination }
        var location: String { server.map { "dav://" + $0.origin.dropFirst("http://".count) + "/dav/phone" } ?? work.destination }

        init(_ kind: TestServer.Kind?, work: Workspace) async throws {
            self.work = work
            server = if let kind { try await TestServer(kind) } else { nil }
        }
    }

    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    @Test("a sync where both sides changed a file to the same size and the same nanosecond time keeps both versions",
          arguments: [TestServer.Kind?.none, .nginx])
    func bothChangedAlike(_ kind: TestServer.Kind?) async throws {
        let work = Workspace()
        let remote = try await Remote(kind, work: work)
        let sync = ["sync", work.source, "--to", remote.location, "--state", work.state, "--json"]
        try TreeGenerator.write(at: work.source + "/DCIM/IMG_0.jpg", size: 4000, seed: 1, modified: 1_700_000_000)
        try TreeGenerator.write(at: work.source + "/DCIM/IMG_1.jpg", size: 4000, seed: 2, modified: 1_700_000_001)
        let first = try await work.ferry(sync)
        #expect(first.status == 0, "\(first.diagnostics)")

        // Both sides edited to 5,000 bytes of different content, stamped with one time.
        try TreeGenerator.write(at: work.source + "/DCIM/IMG_0.jpg", size: 5000, seed: 10, modified: Self.sharedTime)
        try TreeGenerator.write(at: remote.directory + "/DCIM/IMG_0.jpg", size: 5000, seed: 20, modified: Self.sharedTime)
        let localEdit = try Self.bytes(work.source + "/DCIM/IMG_0.jpg")
        let remoteEdit = try Self.bytes(remote.directory + "/DCIM/IMG_0.jpg")
        #expect(localEdit != remoteEdit)

        let second = try await work.ferry(sync)
        #expect(second.status == 0, "\(second.diagnostics)")
        // Nothing is lost: both edits are on both sides (keep-both, the default policy).
        for side in [work.source, remote.directory] {
            let copies = try TreeComparison.files(in: side + "/DCIM").keys.filter { $0.hasPrefix("IMG_0") }
            #expect(copies.count == 2, "\(side): \(copies)")
            let contents = Set(try copies.map { try Self.bytes(side + "/DCIM/" + $0) })
            #expect(contents == [localEdit, remoteEdit], "\(side) lost an edit")
        }
        // And the sides now agree, so a third sync has nothing to do.
        let third = try await work.ferry(sync)
        #expect(third.int("uploaded") == 0 && third.int("downloaded") == 0, "\(third.diagnostics)")
    }

    @Test("copies that look alike and hold the same bytes are recorded in sync without a transfer",
          arguments: [TestServer.Kind?.none, .nginx])
    func equalBytesAdopted(_ kind: TestServer.Kind?) async throws {
        let work = Workspace()
        let remote = try await Remote(kind, work: work)
        for side in [work.source, remote.directory] {
            try TreeGenerator.write(at: side + "/DCIM/IMG_0.jpg", size: 6000, seed: 3, modified: Self.sharedTime)
        }
        let push = try await work.ferry(["push", work.source, "--to", remote.location, "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        #expect(push.int("uploaded") == 0, "\(push.diagnostics)")
        #expect(push.events(named: "skipped").contains { ($0["reason"] as? String)?.contains("same bytes") == true },
                "\(push.diagnostics)")
        let status = try await work.ferry(["status", "--state", work.state, "--json"])
        #expect(status.standardOutput.contains("\"inSync\""), "\(status.standardOutput)")
    }

    @Test("a first push over a remote copy with the same size and time but other bytes sends the local file")
    func pushOverDifferentLookAlike() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/a.jpg", size: 3000, seed: 4, modified: Self.sharedTime)
        try TreeGenerator.write(at: work.destination + "/a.jpg", size: 3000, seed: 5, modified: Self.sharedTime)
        let push = try await work.push()
        #expect(push.status == 0, "\(push.diagnostics)")
        #expect(push.int("uploaded") == 1, "\(push.diagnostics)")
        #expect(try Self.bytes(work.destination + "/a.jpg") == Self.bytes(work.source + "/a.jpg"))
    }

    @Test("a first pull over a local copy with the same size and time but other bytes fetches the remote file")
    func pullOverDifferentLookAlike() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/a.jpg", size: 3000, seed: 6, modified: Self.sharedTime)
        try TreeGenerator.write(at: work.destination + "/a.jpg", size: 3000, seed: 7, modified: Self.sharedTime)
        let pull = try await work.ferry(["pull", work.destination, "--from", work.source, "--state", work.state, "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == 1, "\(pull.diagnostics)")
        #expect(try Self.bytes(work.destination + "/a.jpg") == Self.bytes(work.source + "/a.jpg"))
    }

    @Test("a look-alike file larger than transfers.compare_max_size is not read: sync keeps both copies")
    func tooLargeToCompareKeepsBoth() async throws {
        let work = Workspace()
        try Data("transfers:\n  compare_max_size: 1k\n".utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        try TreeGenerator.write(at: work.source + "/a.jpg", size: 3000, seed: 8, modified: Self.sharedTime)
        try TreeGenerator.write(at: work.destination + "/a.jpg", size: 3000, seed: 8, modified: Self.sharedTime)
        let sync = try await work.ferry(["sync", work.source, "--to", work.destination, "--state", work.state, "--json",
                                         "--config", work.directory.child("config.yml")])
        #expect(sync.status == 0, "\(sync.diagnostics)")
        #expect(sync.int("downloaded") == 1 || sync.int("uploaded") == 1, "a keep-both copy: \(sync.diagnostics)")
        #expect(try TreeComparison.files(in: work.source).count == 2)
        #expect(try TreeComparison.files(in: work.destination).count == 2)
    }
}
