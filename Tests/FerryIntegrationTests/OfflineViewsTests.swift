import FerryTestSupport
import Foundation
import Testing

/// Issue 51, "Offline views": the journal knows every file Ferry synced, so `ferry ls` of
/// a remote that cannot be reached answers from it (saying so and since when), and
/// `ferry find` searches names across folders without asking any server.
@Suite("offline views: ls from the journal, find across folders", .integration)
struct OfflineViewsTests {
    static let files = ["2024/IMG_0001.jpg", "2024/IMG_0002.jpg", "tracks/ride.gpx", "notes.txt"]

    /// A folder pushed to nginx through a configured remote `nas`, then the server stopped.
    static func pushedThenOffline(_ work: Workspace) async throws -> TestServer {
        let server = try await TestServer(.nginx)
        for (index, path) in files.enumerated() {
            try TreeGenerator.write(at: work.source + "/" + path, size: 1000 + index, seed: UInt64(index))
        }
        let config = """
            remotes:
              nas:
                type: webdav
                url: \(server.url("/dav/photos"))
                connect_timeout: 2
            folders:
              photos:
                path: \(work.source)
                remote: nas
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let pushed = try await work.ferry(["push", "photos", "--state", work.state])
        #expect(pushed.status == 0, "\(pushed.diagnostics)")
        return server
    }

    @Test("ls of an unreachable remote lists what Ferry last saw, says it is offline and since when; --cached does it online")
    func lsOffline() async throws {
        let work = Workspace()
        let server = try await Self.pushedThenOffline(work)
        let online = try await work.ferry(["ls", "nas", "-R", "--state", work.state])
        try await onOwnThread { try server.stop() }

        let all = try await work.ferry(["ls", "nas", "-R", "--state", work.state])
        #expect(all.status == 0, "\(all.diagnostics)")
        #expect(all.standardError.contains("cannot be reached") && all.standardError.contains("(offline)"), "\(all.diagnostics)")
        #expect(all.standardError.contains("as of 20"), "\(all.diagnostics)")
        for path in Self.files { #expect(all.standardOutput.contains(path), "\(all.diagnostics)") }
        #expect(all.standardOutput == online.standardOutput, "the same lines as when it was online")

        let top = try await work.ferry(["ls", "nas", "--state", work.state])
        #expect(top.status == 0, "\(top.diagnostics)")
        let names = top.standardOutput.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" }
        #expect(names.sorted() == ["2024/", "notes.txt", "tracks/"], "\(top.diagnostics)")

        let below = try await work.ferry(["ls", "nas:2024", "--state", work.state, "--json"])
        #expect(below.status == 0, "\(below.diagnostics)")
        let listed = below.events.compactMap { $0["path"] as? String }
        #expect(listed.sorted() == ["IMG_0001.jpg", "IMG_0002.jpg"], "\(below.diagnostics)")
        #expect(below.events.allSatisfy { $0["cached"] as? Bool == true && $0["as_of"] is String }, "\(below.diagnostics)")

        try await onOwnThread { try server.restart() }
        let cached = try await work.ferry(["ls", "nas", "-R", "--cached", "--state", work.state])
        #expect(cached.status == 0 && cached.standardError.contains("from the journal"), "\(cached.diagnostics)")
        #expect(cached.standardOutput == online.standardOutput)

        // A remote no folder syncs with: nothing to answer from.
        try await onOwnThread { try server.stop() }
        let stranger = try await work.ferry(["ls", server.url("/dav/elsewhere").replacingOccurrences(of: "http://", with: "dav://"),
                                             "--state", work.state])
        #expect(stranger.status != 0, "\(stranger.diagnostics)")
    }

    @Test("find searches names across folders from the journal, online or not: text, globs, a folder, --json, exit 1 for none")
    func find() async throws {
        let work = Workspace()
        let server = try await Self.pushedThenOffline(work)
        try await onOwnThread { try server.stop() }

        let text = try await work.ferry(["find", "img_000", "--state", work.state])
        #expect(text.status == 0, "\(text.diagnostics)")
        #expect(text.standardOutput.contains("photos: 2024/IMG_0001.jpg") && text.standardOutput.contains("photos: 2024/IMG_0002.jpg"),
                "\(text.diagnostics)")
        #expect(text.standardOutput.contains("here and on the remote"))

        let glob = try await work.ferry(["find", "*.gpx", "photos", "--state", work.state, "--json"])
        #expect(glob.status == 0, "\(glob.diagnostics)")
        #expect(glob.events.compactMap { $0["path"] as? String } == ["tracks/ride.gpx"], "\(glob.diagnostics)")
        #expect(glob.events.first?["folder"] as? String == "photos")
        #expect(glob.events.first?["remote"] as? Bool == true)

        let none = try await work.ferry(["find", "no-such-name", "--state", work.state])
        #expect(none.status == 1, "\(none.diagnostics)")
        #expect(none.standardOutput.isEmpty)
        let badGlob = try await work.ferry(["find", "[unclosed", "--state", work.state])
        #expect(badGlob.status == 2, "\(badGlob.diagnostics)")
    }
}
