import FerryTestSupport
import Foundation
import Testing

/// One file whose name is spelled in NFC locally (`café.jpg` with é as one character, as
/// most Linux programs write it) and in NFD on the remote (e plus a combining accent, as a
/// Mac client uploads it) — issue 49. Linux and nginx keep names byte for byte, so the two
/// spellings are two different names to them; to a person and to Ferry's planner they are
/// one file. Each side keeps its own spelling: a pull writes the remote's bytes under the
/// local name, a push replaces the remote file under the remote's name, and no second copy
/// appears on either side.
@Suite("one name in NFC locally and NFD on the remote", .integration)
struct NameFormsAcrossSidesTests {
    static let nfc = "caf\u{E9}.jpg"
    static let nfd = "cafe\u{301}.jpg"

    /// The remote end: a local folder, or a folder on nginx.
    struct Remote {
        let server: TestServer?
        let work: Workspace
        var directory: String { server.map { $0.directory + "/root/phone" } ?? work.destination }
        var location: String { server.map { "dav://" + $0.origin.dropFirst("http://".count) + "/dav/phone" } ?? work.destination }

        init(_ kind: TestServer.Kind?, work: Workspace) async throws {
            self.work = work
            server = if let kind { try await TestServer(kind) } else { nil }
            try FileManager.default.createDirectory(atPath: directory + "/DCIM", withIntermediateDirectories: true)
        }
    }

    /// The names in a folder, byte for byte (a `[String: …]` would fold the two forms into one).
    static func names(in folder: String) throws -> [[UInt8]] {
        try FileManager.default.contentsOfDirectory(atPath: folder).map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    static func run(_ mode: String, _ work: Workspace, _ remote: Remote, _ extra: [String] = []) async throws -> FerryProcess.Result {
        try await work.ferry([mode, work.source, mode == "pull" ? "--from" : "--to", remote.location,
                              "--state", work.state, "--json"] + extra)
    }

    @Test("a file synced under its NFC name, replaced on the remote by its NFD spelling with other bytes: pull fetches them into the NFC name, push sends back under the NFD name, and runs settle",
          arguments: [TestServer.Kind?.none, .nginx])
    func replacedByOtherSpelling(_ kind: TestServer.Kind?) async throws {
        let work = Workspace()
        let remote = try await Remote(kind, work: work)
        let localFile = work.source + "/DCIM/" + Self.nfc
        let remoteFile = remote.directory + "/DCIM/" + Self.nfd
        try TreeGenerator.write(at: localFile, size: 1000, seed: 1, modified: 1_700_000_000)
        let first = try await Self.run("push", work, remote)
        #expect(first.status == 0 && first.int("uploaded") == 1, "\(first.diagnostics)")

        // A Mac client uploads its edit under the NFD spelling; the NFC file goes.
        try FileManager.default.removeItem(atPath: remote.directory + "/DCIM/" + Self.nfc)
        try TreeGenerator.write(at: remoteFile, size: 2000, seed: 2, modified: 1_700_000_100)
        let pull = try await Self.run("pull", work, remote)
        #expect(pull.status == 0 && pull.int("downloaded") == 1, "\(pull.diagnostics)")
        #expect(try Self.bytes(localFile) == Self.bytes(remoteFile), "the remote's edit did not reach the local file")
        #expect(try Self.names(in: work.source + "/DCIM") == [Array(Self.nfc.utf8)], "the local side keeps its own spelling only")
        #expect(try Self.names(in: remote.directory + "/DCIM") == [Array(Self.nfd.utf8)])

        let again = try await Self.run("pull", work, remote)
        #expect(again.status == 0 && again.int("downloaded") == 0 && again.int("failed") == 0, "\(again.diagnostics)")

        // The remote changes again: the next pull fetches it again, into the same local name.
        try TreeGenerator.write(at: remoteFile, size: 3000, seed: 3, modified: 1_700_000_200)
        let third = try await Self.run("pull", work, remote)
        #expect(third.status == 0 && third.int("downloaded") == 1, "\(third.diagnostics)")
        #expect(try Self.bytes(localFile) == Self.bytes(remoteFile))

        // A local edit goes to the remote's file, not to a second one beside it.
        try TreeGenerator.write(at: localFile, size: 4000, seed: 4, modified: 1_700_000_300)
        let push = try await Self.run("push", work, remote)
        #expect(push.status == 0 && push.int("uploaded") == 1, "\(push.diagnostics)")
        #expect(try Self.names(in: remote.directory + "/DCIM") == [Array(Self.nfd.utf8)], "a second spelling appeared on the remote")
        #expect(try Self.bytes(localFile) == Self.bytes(remoteFile), "the local edit did not reach the remote file")

        let settled = try await Self.run("push", work, remote)
        #expect(settled.status == 0 && settled.int("uploaded") == 0 && settled.int("failed") == 0, "\(settled.diagnostics)")
        let settledPull = try await Self.run("pull", work, remote)
        #expect(settledPull.status == 0 && settledPull.int("downloaded") == 0 && settledPull.int("failed") == 0,
                "\(settledPull.diagnostics)")
    }

    @Test("a first push of an NFC name onto a remote that holds its NFD spelling replaces that file instead of adding a second",
          arguments: [TestServer.Kind?.none, .nginx])
    func firstPushOntoOtherSpelling(_ kind: TestServer.Kind?) async throws {
        let work = Workspace()
        let remote = try await Remote(kind, work: work)
        try TreeGenerator.write(at: remote.directory + "/DCIM/" + Self.nfd, size: 2000, seed: 2, modified: 1_700_000_000)
        try TreeGenerator.write(at: work.source + "/DCIM/" + Self.nfc, size: 1000, seed: 1, modified: 1_700_000_100)
        let push = try await Self.run("push", work, remote)
        #expect(push.status == 0 && push.int("uploaded") == 1, "\(push.diagnostics)")
        #expect(try Self.names(in: remote.directory + "/DCIM") == [Array(Self.nfd.utf8)], "a second spelling appeared on the remote")
        #expect(try Self.bytes(work.source + "/DCIM/" + Self.nfc) == Self.bytes(remote.directory + "/DCIM/" + Self.nfd))

        let again = try await Self.run("push", work, remote)
        #expect(again.status == 0 && again.int("uploaded") == 0 && again.int("failed") == 0, "\(again.diagnostics)")
        let pull = try await Self.run("pull", work, remote)
        #expect(pull.status == 0 && pull.int("downloaded") == 0 && pull.int("failed") == 0, "\(pull.diagnostics)")
    }

    @Test("a first pull into a folder whose NFC file differs from the remote's NFD one keeps the local bytes aside and fetches the remote's into the NFC name",
          arguments: [TestServer.Kind?.none, .nginx])
    func firstPullOntoOtherSpelling(_ kind: TestServer.Kind?) async throws {
        let work = Workspace()
        let remote = try await Remote(kind, work: work)
        let localFile = work.source + "/DCIM/" + Self.nfc
        try TreeGenerator.write(at: remote.directory + "/DCIM/" + Self.nfd, size: 2000, seed: 2, modified: 1_700_000_000)
        try TreeGenerator.write(at: localFile, size: 1000, seed: 1, modified: 1_700_000_100)
        let localBefore = try Self.bytes(localFile)
        // nginx hides dot names, and no Ferry wrote a catalog of them there: said, and not the point here.
        let pull = try await Self.run("pull", work, remote, ["--ignore-hidden-names"])
        #expect(pull.status == 0 && pull.int("downloaded") == 1 && pull.int("kept_both") == 1, "\(pull.diagnostics)")
        #expect(try Self.bytes(localFile) == Self.bytes(remote.directory + "/DCIM/" + Self.nfd))
        let local = try Self.names(in: work.source + "/DCIM")
        #expect(local.count == 2 && local.contains(Array(Self.nfc.utf8)) && !local.contains(Array(Self.nfd.utf8)), "\(local)")
        let copy = try #require(try FileManager.default.contentsOfDirectory(atPath: work.source + "/DCIM").first { $0.contains("conflict") })
        #expect(try Self.bytes(work.source + "/DCIM/" + copy) == localBefore, "the local version was lost")
        #expect(try Self.names(in: remote.directory + "/DCIM") == [Array(Self.nfd.utf8)])

        let again = try await Self.run("pull", work, remote, ["--ignore-hidden-names"])
        #expect(again.status == 0 && again.int("downloaded") == 0 && again.int("failed") == 0, "\(again.diagnostics)")
        #expect(try Self.bytes(localFile) == Self.bytes(remote.directory + "/DCIM/" + Self.nfd))
    }

    @Test("a sync where the local NFC file and the remote's NFD spelling both changed keeps both versions on both sides, and the remote keeps its spelling",
          arguments: [TestServer.Kind?.none, .nginx])
    func bothChangedInSync(_ kind: TestServer.Kind?) async throws {
        let work = Workspace()
        let remote = try await Remote(kind, work: work)
        let localFile = work.source + "/DCIM/" + Self.nfc
        try TreeGenerator.write(at: localFile, size: 1000, seed: 1, modified: 1_700_000_000)
        let first = try await Self.run("sync", work, remote)
        #expect(first.status == 0 && first.int("uploaded") == 1, "\(first.diagnostics)")

        // Edited on both sides; the remote's edit came back under the NFD spelling.
        try FileManager.default.removeItem(atPath: remote.directory + "/DCIM/" + Self.nfc)
        try TreeGenerator.write(at: remote.directory + "/DCIM/" + Self.nfd, size: 2000, seed: 2, modified: 1_700_000_100)
        try TreeGenerator.write(at: localFile, size: 3000, seed: 3, modified: 1_700_000_200)
        let edits = [try Self.bytes(remote.directory + "/DCIM/" + Self.nfd), try Self.bytes(localFile)]
        let sync = try await Self.run("sync", work, remote)
        #expect(sync.status == 0 && sync.int("failed") == 0, "\(sync.diagnostics)")
        for (side, name) in [(work.source, Self.nfc), (remote.directory, Self.nfd)] {
            let names = try FileManager.default.contentsOfDirectory(atPath: side + "/DCIM")
            #expect(names.count == 2 && names.contains { Array($0.utf8) == Array(name.utf8) }, "\(side): \(names.map { Array($0.utf8) })")
            #expect(Set(try names.map { try Self.bytes(side + "/DCIM/" + $0) }) == Set(edits), "\(side) lost an edit")
        }
        #expect(try Self.bytes(localFile) == Self.bytes(remote.directory + "/DCIM/" + Self.nfd))

        let again = try await Self.run("sync", work, remote)
        #expect(again.status == 0 && again.int("uploaded") == 0 && again.int("downloaded") == 0 && again.int("failed") == 0,
                "\(again.diagnostics)")
    }
}
