import FerryTestSupport
import Foundation
import Testing

/// A symbolic link planted in a synced folder (or in a `type: local` remote's folder) never
/// redirects a write: not as a partial file's name, not as a folder on a file's path
/// (statically, or swapped in while a transfer runs), not as the trash (issue 12, case 5);
/// and a state folder inside the synced folder is never synced (case 6).
@Suite("planted links and the state folder", .integration)
struct PlantedLinkTests {
    /// A victim file outside every synced folder, and a folder outside them.
    struct Outside {
        let victim: String
        let folder: String
        static let victimBytes = Data("do not touch\n".utf8)

        init(_ work: Workspace) throws {
            victim = work.directory.child("victim.txt")
            folder = work.directory.child("outside")
            try Self.victimBytes.write(to: URL(fileURLWithPath: victim))
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }

        func untouched() throws -> Bool {
            try Data(contentsOf: URL(fileURLWithPath: victim)) == Self.victimBytes
                && FileManager.default.contentsOfDirectory(atPath: folder).isEmpty
        }
    }

    static func link(_ path: String, to target: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }

    func pull(_ work: Workspace) async throws -> FerryProcess.Result {
        try await work.ferry(["pull", work.destination, "--from", work.source, "--state", work.state, "--json"])
    }

    @Test("a pull never writes through a link planted under a partial file's name")
    func partialNameLink() async throws {
        let work = Workspace()
        let outside = try Outside(work)
        try TreeGenerator.write(at: work.source + "/a.jpg", size: 5000, seed: 1)
        try Self.link(work.destination + "/.a.jpg.ferry-part", to: outside.victim)
        let pull = try await pull(work)
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(try outside.untouched(), "the victim was written through the planted link")
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.destination + "/a.jpg"))
                == Data(contentsOf: URL(fileURLWithPath: work.source + "/a.jpg")))
    }

    @Test("a pull refuses a folder that is a link out of the folder: that file fails, nothing is written outside")
    func folderLinkOnPull() async throws {
        let work = Workspace()
        let outside = try Outside(work)
        try TreeGenerator.write(at: work.source + "/sub/b.jpg", size: 5000, seed: 2)
        try TreeGenerator.write(at: work.source + "/c.jpg", size: 100, seed: 3)
        try Self.link(work.destination + "/sub", to: outside.folder)
        let pull = try await pull(work)
        #expect(pull.status == 1, "\(pull.diagnostics)")
        #expect(pull.standardOutput.contains("symbolic link"), "\(pull.diagnostics)")
        #expect(try outside.untouched())
        #expect(FileManager.default.fileExists(atPath: work.destination + "/c.jpg"), "the other file was held up")
    }

    @Test("a push into a local remote never writes through a link planted in the remote folder")
    func linksInLocalRemote() async throws {
        let work = Workspace()
        let outside = try Outside(work)
        try TreeGenerator.write(at: work.source + "/sub/b.jpg", size: 5000, seed: 4)
        try TreeGenerator.write(at: work.source + "/d.jpg", size: 5000, seed: 5)
        try Self.link(work.destination + "/sub", to: outside.folder)
        try Self.link(work.destination + "/.d.jpg.ferry-part", to: outside.victim)
        let push = try await work.push()
        #expect(push.status == 1, "\(push.diagnostics)")
        #expect(push.standardOutput.contains("symbolic link"), "\(push.diagnostics)")
        #expect(try outside.untouched())
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.destination + "/d.jpg"))
                == Data(contentsOf: URL(fileURLWithPath: work.source + "/d.jpg")))
    }

    @Test("a sync's move into the trash refuses a trash folder that is a link")
    func trashLink() async throws {
        let work = Workspace()
        let outside = try Outside(work)
        try TreeGenerator.write(at: work.source + "/e.jpg", size: 300, seed: 6)
        let sync = ["sync", work.source, "--to", work.destination, "--state", work.state, "--json"]
        #expect(try await work.ferry(sync).status == 0)
        // Deleted on the remote: the local copy goes to the local trash, which is a link.
        try FileManager.default.removeItem(atPath: work.destination + "/e.jpg")
        try Self.link(work.source + "/.ferry-trash", to: outside.folder)
        let again = try await work.ferry(sync + ["--force-delete"])
        #expect(again.status == 1, "\(again.diagnostics)")
        #expect(try outside.untouched())
        #expect(FileManager.default.fileExists(atPath: work.source + "/e.jpg"), "deleted without its trash copy")
    }

    @Test("emptying expired trash folders removes planted links as links, never what they point to")
    func trashExpiryLinks() async throws {
        let work = Workspace()
        let outside = try Outside(work)
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: outside.folder + "/precious.jpg"))
        try TreeGenerator.write(at: work.source + "/e.jpg", size: 300, seed: 6)
        let sync = ["sync", work.source, "--to", work.destination, "--state", work.state, "--json"]
        #expect(try await work.ferry(sync).status == 0)
        // Expired run folders of the local trash: one is a link to a folder outside, one
        // holds a link to a file outside.
        try Self.link(work.source + "/.ferry-trash/20200101-000000", to: outside.folder)
        try Self.link(work.source + "/.ferry-trash/20200102-000000/old.jpg", to: outside.victim)
        let again = try await work.ferry(sync)
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: outside.victim)) == Outside.victimBytes)
        #expect(try Data(contentsOf: URL(fileURLWithPath: outside.folder + "/precious.jpg")) == Data("keep me\n".utf8))
        // The expired entries themselves are gone.
        let left = try FileManager.default.contentsOfDirectory(atPath: work.source + "/.ferry-trash")
        #expect(!left.contains("20200101-000000") && !left.contains("20200102-000000"), "\(left)")
    }

    @Test("a folder swapped for a link while its file downloads: nothing is written outside, the file fails")
    func folderSwappedDuringDownload() async throws {
        let work = Workspace()
        let outside = try Outside(work)
        let config = work.directory.child("config.yml")
        try ("remotes:\n" + work.heldStoreRemote("store", hold: "sub/b.jpg") + """
            folders:
              media:
                path: src
                remote: store
              back:
                path: dst
                remote: store
                mode: pull
            retry:
              attempts: 2
              base_delay: 10ms
            """).write(toFile: config, atomically: true, encoding: .utf8)
        try TreeGenerator.write(at: work.source + "/sub/b.jpg", size: 200_000, seed: 7)
        // The push is not held (released beforehand); the pull's download is.
        let release = work.directory.child("release")
        try Data("release\n".utf8).write(to: URL(fileURLWithPath: release))
        let push = try await work.ferry(["push", "media", "--config", config, "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        try FileManager.default.createDirectory(atPath: work.destination + "/sub", withIntermediateDirectories: true)
        try FileManager.default.removeItem(atPath: release)
        let pulling = try FerryProcess(["pull", "back", "--config", config, "--state", work.state, "--json"],
                                       in: work.directory.path)
        defer { pulling.stopIfRunning() }
        let swapped = await when({ FileManager.default.fileExists(atPath: work.directory.child("held")) }, do: {
            try? FileManager.default.moveItem(atPath: work.destination + "/sub", toPath: work.destination + "/sub-moved")
            try? FileManager.default.createSymbolicLink(atPath: work.destination + "/sub", withDestinationPath: outside.folder)
            try? Data("release\n".utf8).write(to: URL(fileURLWithPath: release))
        })
        #expect(swapped)
        let result = await pulling.wait()
        #expect(result.status == 1, "\(result.diagnostics)")
        #expect(try outside.untouched(), "written through the swapped-in link")
        #expect(!FileManager.default.fileExists(atPath: work.destination + "/sub-moved/b.jpg"), "a file under its final name")
    }

    @Test("a state folder inside the synced folder is neither pushed nor overwritten by a pull")
    func stateFolderInside() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/f.jpg", size: 100, seed: 8)
        let state = work.source + "/.ferry-state"
        let push = try await work.ferry(["push", work.source, "--to", work.destination, "--state", state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        #expect(push.int("uploaded") == 1, "\(push.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: work.destination + "/.ferry-state"), "the live journal was pushed")

        // A remote holding an old copy of a state folder: a pull leaves the live one alone.
        try TreeGenerator.write(at: work.destination + "/.ferry-state/journal.sqlite", size: 100, seed: 9)
        let stale = try Data(contentsOf: URL(fileURLWithPath: work.destination + "/.ferry-state/journal.sqlite"))
        let pull = try await work.ferry(["pull", work.source, "--from", work.destination, "--state", state, "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == 0, "\(pull.diagnostics)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: state + "/journal.sqlite")) != stale, "the live journal was overwritten")
    }
}
