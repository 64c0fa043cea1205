import FerryTestSupport
import Foundation
import Testing

/// A restore sees every file Ferry put on the remote, on every server, or says why not and
/// exits non-zero; a pull from a remote folder that does not exist fails and creates
/// nothing (issue 12, cases 1 and 2).
@Suite("remote completeness: hidden names and missing folders", .integration)
struct RemoteCompletenessTests {
    static func dav(_ server: TestServer, _ path: String) -> String {
        "dav://" + server.origin.dropFirst("http://".count) + path
    }

    /// A media folder with hidden names: a thumbnails folder and a marker file.
    static func mediaFolder(_ root: String) throws {
        try TreeGenerator.write(at: root + "/DCIM/IMG_1.jpg", size: 3000, seed: 1, modified: 1_700_000_000)
        try TreeGenerator.write(at: root + "/DCIM/.thumbnails/IMG_1.jpg", size: 300, seed: 2, modified: 1_700_000_001)
        try TreeGenerator.write(at: root + "/DCIM/.nomedia", size: 0, seed: 3, modified: 1_700_000_002)
        try TreeGenerator.write(at: root + "/.hidden-top/notes.gpx", size: 500, seed: 4, modified: 1_700_000_003)
    }

    /// A pull of `remote` into a new folder with a state folder of its own brings back
    /// exactly the workspace's source, hidden names included.
    static func expectFullRestore(_ work: Workspace, from remote: String) async throws {
        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", remote, "--state", work.directory.child("s1"), "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: false) == [])
    }

    @Test("push then pull and sync into fresh states see every hidden name", arguments: TestServer.Kind.webDAV)
    func hiddenNamesComeBack(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        let work = Workspace()
        try Self.mediaFolder(work.source)
        let remote = Self.dav(server, "/dav/phone")
        let push = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")

        try await Self.expectFullRestore(work, from: remote)

        // A sync into an empty folder with a fresh state brings them too, and sends nothing.
        let synced = work.directory.child("synced")
        try FileManager.default.createDirectory(atPath: synced, withIntermediateDirectories: true)
        let sync = try await work.ferry(["sync", synced, "--to", remote, "--state", work.directory.child("s2"), "--json"])
        #expect(sync.status == 0, "\(sync.diagnostics)")
        #expect(sync.int("uploaded") == 0, "\(sync.diagnostics)")
        #expect(try TreeComparison.differences(work.source, synced, compareModificationTimes: false) == [])
    }

    @Test("a hidden file deleted by a later push is no longer restored")
    func catalogFollowsDeletions() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try Self.mediaFolder(work.source)
        let remote = Self.dav(server, "/dav/phone")
        #expect(try await work.ferry(["push", work.source, "--to", remote, "--state", work.state]).status == 0)
        try FileManager.default.removeItem(atPath: work.source + "/DCIM/.nomedia")
        let mirror = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--delete", "--json"])
        #expect(mirror.status == 0 && mirror.int("deleted") == 1, "\(mirror.diagnostics)")
        try await Self.expectFullRestore(work, from: remote)
    }

    @Test("nginx with files Ferry has no catalog of: the pull says which server behaviour and folder, and exits 1")
    func noCatalogOnAServerThatHidesNames() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        // Put on the server by something other than Ferry.
        try Self.mediaFolder(server.directory + "/root/other")
        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", Self.dav(server, "/dav/other"), "--state", work.state])
        #expect(pull.status == 1, "\(pull.diagnostics)")
        let lines = pull.standardError.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("leaves names that start with '.' out of its listings")
                && lines[0].contains("/dav/other"), "\(pull.diagnostics)")
        // What could be seen was pulled.
        #expect(FileManager.default.fileExists(atPath: restored + "/DCIM/IMG_1.jpg"))
    }

    @Test("the WebDAV probe tells a server that hides names from one that lists them", arguments: TestServer.Kind.webDAV)
    func probeSeesHiddenNames(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        let work = Workspace()
        let probe = try await work.ferry(["plugins", "--probe", Self.dav(server, "/dav/")])
        #expect(probe.status == 0, "\(probe.diagnostics)")
        let capabilities = probe.standardOutput.split(separator: "\n").first { $0.contains("capabilities:") } ?? ""
        #expect(capabilities.contains("hides-dot-names") == (kind == .nginx), "\(probe.diagnostics)")
    }

    @Test("a pull from a remote folder that does not exist fails with one line, exit 1, and creates nothing",
          arguments: ["local", "nginx", "configured"])
    func pullFromMissingFolder(_ kind: String) async throws {
        let work = Workspace()
        let server: TestServer? = kind == "local" ? nil : try await TestServer(.nginx)
        var arguments = ["--state", work.state]
        let missing: String
        switch (kind, server) {
        case let ("configured", server?):
            // `--from nas:typo-path`, the remote as the user named it in config.yml.
            let config = work.directory.child("config.yml")
            try Data("remotes:\n  nas:\n    type: webdav\n    url: \(server.url("/dav/"))\n".utf8)
                .write(to: URL(fileURLWithPath: config))
            arguments += ["--config", config]
            missing = "nas:typo-path"
        case let (_, server?):
            missing = Self.dav(server, "/dav/typo-path")
        default:
            missing = work.directory.child("no/such/dir")
        }
        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", missing] + arguments)
        #expect(pull.status == 1, "\(pull.diagnostics)")
        let lines = pull.standardError.split(separator: "\n")
        #expect(lines.count == 1, "\(pull.diagnostics)")
        #expect(lines.first?.contains("does not exist") == true, "\(pull.diagnostics)")
        #expect(lines.first.map { $0.contains("typo-path") || $0.contains("no/such/dir") } == true, "\(pull.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: restored), "the local folder was created")
    }

    @Test("over plain HTTP from nginx's index (which hides names that start with '.'): a pull into a fresh state brings every hidden file back; with no catalog it says so and exits 1")
    func hiddenNamesOverHTTP() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try Self.mediaFolder(work.source)
        let remote = server.url("/files/phone")
        let push = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        try await Self.expectFullRestore(work, from: remote)

        // Put there by something other than Ferry: nothing tells what the index hides.
        try Self.mediaFolder(server.directory + "/root/other")
        let blind = try await work.ferry(["pull", work.directory.child("blind"), "--from", server.url("/files/other"),
                                          "--state", work.directory.child("s2")])
        #expect(blind.status == 1, "\(blind.diagnostics)")
        #expect(blind.standardError.contains("leaves names that start with '.' out of its listings"), "\(blind.diagnostics)")
    }

    @Test("verify on nginx sees the hidden files Ferry put there instead of reporting them gone")
    func verifySeesHiddenFiles() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try Self.mediaFolder(work.source)
        let remote = Self.dav(server, "/dav/phone")
        #expect(try await work.ferry(["push", work.source, "--to", remote, "--state", work.state]).status == 0)
        let verify = try await work.ferry(["verify", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(verify.status == 0, "\(verify.diagnostics)")
        #expect(verify.events(named: "finding").isEmpty, "\(verify.diagnostics)")
        // A hidden file really gone from the server is reported.
        try FileManager.default.removeItem(atPath: server.directory + "/root/phone/DCIM/.nomedia")
        let after = try await work.ferry(["verify", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(after.status == 1, "\(after.diagnostics)")
        #expect(after.events(named: "finding").compactMap { $0["path"] as? String } == ["DCIM/.nomedia"], "\(after.diagnostics)")
    }

    /// A first sync stopped (Ctrl-C) before it wrote its catalog: the run after it listed the
    /// files the stopped run had put there, found no catalog, said it could not see hidden
    /// names on this server and exited 1, though every file there was its own.
    @Test("a first sync stopped before it wrote its catalog runs again with no warning, and a pull elsewhere sees every hidden name")
    func firstSyncStoppedBeforeItsCatalog() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try Self.mediaFolder(work.source)
        // The proxy holds the third file's upload (the capability probe's and the write
        // lease's PUTs aside): the stop lands after two files arrived, however fast or slow
        // the machine is.
        let gate = work.directory.child("gate")
        try FileManager.default.createDirectory(atPath: gate, withIntermediateDirectories: true)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0,
                                         options: ["--hold", "^PUT (?!.*\\.ferry-(probe|catalog)):2", "--gate", gate])
        let remote = "dav://" + proxy.origin.dropFirst("http://".count) + "/dav/phone"
        let running = try FerryProcess(["sync", work.source, "--to", remote, "--state", work.state, "--transfers", "1"],
                                       in: work.directory.path)
        await when({ FileManager.default.fileExists(atPath: gate + "/held") }, do: { running.send(SIGINT) })
        try Data().write(to: URL(fileURLWithPath: gate + "/release"))
        let stopped = await running.wait()
        #expect(stopped.status == 130, "\(stopped.diagnostics)")
        // The folder holds the write lease while the run writes (given back when it stops).
        let catalogFolder = server.directory + "/root/phone/.ferry-catalog"
        let written = ((try? FileManager.default.contentsOfDirectory(atPath: catalogFolder)) ?? []).filter { !$0.hasSuffix(".lease") }
        #expect(written.isEmpty, "the stopped run wrote its catalog: \(written)")
        #expect(proxy.requests.filter { $0.hasPrefix("MOVE ") && !$0.contains(".ferry-probe") && !$0.contains(".ferry-catalog") }.count >= 2,
                "\(proxy.requests)")

        let again = try await work.ferry(["sync", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(!again.standardError.contains("out of its listings"), "\(again.diagnostics)")
        #expect(FileManager.default.fileExists(atPath: server.directory + "/root/phone/.ferry-catalog"))
        try await Self.expectFullRestore(work, from: Self.dav(server, "/dav/phone"))
    }

    /// The record that lets a stopped first sync go on is made only when the folder was
    /// empty: a sync whose first run found someone else's files, run again with no catalog
    /// there, still says it cannot see their hidden names, and still counts the hidden files
    /// it put there itself as there.
    @Test("a sync that found someone else's files on nginx says so again on a run with no catalog there")
    func syncIntoForeignFilesKeepsWarning() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try Self.mediaFolder(server.directory + "/root/other")
        // A hidden file of this side in a folder the listing shows (a hidden folder is
        // listed by name; a hidden file beside listed ones cannot be), which the first run sends.
        try TreeGenerator.write(at: work.source + "/album/a.jpg", size: 900, seed: 8, modified: 1_700_000_008)
        try TreeGenerator.write(at: work.source + "/album/.picasa.ini", size: 70, seed: 9, modified: 1_700_000_009)
        for round in 1...2 {
            let sync = try await work.ferry(["sync", work.source, "--to", Self.dav(server, "/dav/other"), "--state", work.state])
            #expect(sync.status == 1, "round \(round): \(sync.diagnostics)")
            #expect(sync.standardError.contains("out of its listings"), "round \(round): \(sync.diagnostics)")
            // The first run wrote this writer's catalog; without it, as after a stop.
            try FileManager.default.removeItem(atPath: server.directory + "/root/other/.ferry-catalog")
            try FileManager.default.removeItem(atPath: work.state + "/catalogs")
        }
        // The hidden file it sent is still there on both sides: the second run, which cannot
        // see it listed, did not take it for deleted on the remote.
        #expect(FileManager.default.fileExists(atPath: work.source + "/album/.picasa.ini"))
        #expect(FileManager.default.fileExists(atPath: server.directory + "/root/other/album/.picasa.ini"))
    }

    @Test("files pushed before the catalog existed get one with the next push, even one that sends nothing")
    func catalogWrittenForEarlierPushes() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try Self.mediaFolder(work.source)
        let remote = Self.dav(server, "/dav/phone")
        #expect(try await work.ferry(["push", work.source, "--to", remote, "--state", work.state]).status == 0)
        // As an older Ferry left it: the files, and no catalog on either side.
        try FileManager.default.removeItem(atPath: server.directory + "/root/phone/.ferry-catalog")
        try FileManager.default.removeItem(atPath: work.state + "/catalogs")
        let again = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(again.status == 0 && again.int("uploaded") == 0, "\(again.diagnostics)")
        try await Self.expectFullRestore(work, from: remote)
    }

    @Test("a sync that ran before and finds its remote folder gone stops instead of emptying the local folder")
    func syncWithVanishedRemote() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/a.jpg", size: 100, seed: 5)
        let sync = ["sync", work.source, "--to", work.destination, "--state", work.state, "--json"]
        #expect(try await work.ferry(sync).status == 0)
        try FileManager.default.removeItem(atPath: work.destination)
        let again = try await work.ferry(sync)
        #expect(again.status == 1, "\(again.diagnostics)")
        #expect(again.standardError.contains("does not exist"), "\(again.diagnostics)")
        #expect(FileManager.default.fileExists(atPath: work.source + "/a.jpg"))
    }

    /// A catalog of `count` hidden paths named after `writer`, as another device would write it.
    static func plantCatalog(in remote: String, writer: String, count: Int) throws {
        var text = #"{"entries":["#
        for index in 0..<count {
            if index > 0 { text += "," }
            text += #"{"modifiedNanos":1700000000000000000,"path":".thumbnails/\#(writer)-\#(index).jpg","size":1}"#
        }
        text += #"],"version":1}"#
        try FileManager.default.createDirectory(atPath: remote + "/.ferry-catalog", withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: remote + "/.ferry-catalog/\(writer)-0000000000000000.json"))
    }

    @Test("remote catalogs past their size or path limit stop a pull with one line naming the file, not with memory without bound; --ignore-hidden-names runs without them")
    func oversizedCatalogsAreRefused() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/a.jpg", size: 100, seed: 5)
        #expect(try await work.push().status == 0)
        let pull = ["pull", work.directory.child("restored"), "--from", work.destination, "--state", work.directory.child("s2")]

        // Three writers with 100,000 hidden paths each: over the 250,000 read at most.
        for writer in ["phone", "tablet", "laptop"] { try Self.plantCatalog(in: work.destination, writer: writer, count: 100_000) }
        let tooMany = try await work.ferry(pull)
        #expect(tooMany.status == 1, "\(tooMany.diagnostics)")
        #expect(tooMany.standardError.contains("over 250000 hidden paths"), "\(tooMany.diagnostics)")
        #expect(tooMany.standardError.contains("--ignore-hidden-names"), "\(tooMany.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: work.directory.child("restored") + "/a.jpg"))

        // One file past the size limit is refused before it is fetched.
        try FileManager.default.removeItem(atPath: work.destination + "/.ferry-catalog")
        try FileManager.default.createDirectory(atPath: work.destination + "/.ferry-catalog", withIntermediateDirectories: true)
        let huge = work.destination + "/.ferry-catalog/intruder-0000000000000000.json"
        _ = FileManager.default.createFile(atPath: huge, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: huge))
        try handle.truncate(atOffset: 33 << 20)
        try handle.close()
        let tooLarge = try await work.ferry(pull)
        #expect(tooLarge.status == 1, "\(tooLarge.diagnostics)")
        #expect(tooLarge.standardError.contains(".ferry-catalog/intruder-0000000000000000.json is 33 MiB"), "\(tooLarge.diagnostics)")

        let ignoring = try await work.ferry(pull + ["--ignore-hidden-names"])
        #expect(ignoring.status == 0, "\(ignoring.diagnostics)")
        #expect(FileManager.default.fileExists(atPath: work.directory.child("restored") + "/a.jpg"))
    }
}
