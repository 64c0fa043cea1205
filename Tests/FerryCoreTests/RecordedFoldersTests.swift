import FerryConfig
import FerryCore
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerryTestSupport
import Testing

/// How a folder's name or a path picks among the pairs a journal recorded, for every
/// command and the control API alike.
@Suite("recorded folders")
struct RecordedFoldersTests {
    static let plugin = BackendPlugin(
        type: "local", summary: "", options: [.init("path", .path, required: true, summary: "")],
        capabilities: BackendCapabilities(),
        make: { _ throws(BackendError) -> any Backend in throw BackendError(.unsupported, "not in these tests") })

    static let config: Config = {
        try! ConfigLoader(registry: BackendRegistry([plugin])).parse("""
            remotes:
              disk:
                type: local
                path: /srv/backup
            folders:
              photos:
                path: /data/photos
                remote: disk
              moved:
                path: /data/new-place
                remote: disk
              never:
                path: /data/never
                remote: disk
            """, file: "config.yml", baseDirectory: "/")
    }()

    /// The configured photos pair, an ad-hoc pair of the same folder, a pair inside it,
    /// a pair of `moved` from before its path changed, and one of `/`.
    static func recorded(in folder: TemporaryDirectory) async throws -> RecordedFolders {
        let journal = try await StateFolder(directory: folder.path).journal()
        _ = try await journal.folderPair(name: "photos", localRoot: "/data/photos", remoteLocation: "disk", at: 0)
        _ = try await journal.folderPair(name: "photos-adhoc", localRoot: "/data/photos", remoteLocation: "/mnt/usb", at: 0)
        _ = try await journal.folderPair(name: "raw", localRoot: "/data/photos/raw", remoteLocation: "/mnt/raw", at: 0)
        _ = try await journal.folderPair(name: "moved", localRoot: "/data/old-place", remoteLocation: "disk", at: 0)
        _ = try await journal.folderPair(name: "everything", localRoot: "/", remoteLocation: "/mnt/all", at: 0)
        return try await RecordedFolders(journal: journal)
    }

    @Test("a configured folder's pair has its name and its path; an ad-hoc pair of the path or an older path is another")
    func configuredPair() async throws {
        let folder = TemporaryDirectory()
        let recorded = try await Self.recorded(in: folder)
        let config = Self.config
        #expect(recorded.pair(of: try #require(config.folder(named: "photos")))?.remoteLocation == "disk")
        #expect(recorded.pair(of: try #require(config.folder(named: "moved"))) == nil)
        #expect(recorded.pair(of: try #require(config.folder(named: "never"))) == nil)
        #expect(recorded.pairs(named: "photos", config: config, currentDirectory: "/").map(\.name) == ["photos"])
        #expect(recorded.pairs(named: "moved", config: config, currentDirectory: "/").isEmpty)
        // A path means every pair of that folder.
        #expect(Set(recorded.pairs(named: "photos", config: config, currentDirectory: "/data").map(\.name)) == ["photos"])
        #expect(Set(recorded.pairs(named: "/data/photos", config: config, currentDirectory: "/").map(\.name))
                == ["photos", "photos-adhoc"])
        #expect(Set(recorded.pairs(named: "../photos", config: config, currentDirectory: "/data/x").map(\.name))
                == ["photos", "photos-adhoc"])
    }

    @Test("a path inside folders names the innermost pair that holds it, and the path inside that pair")
    func targets() async throws {
        let folder = TemporaryDirectory()
        let recorded = try await Self.recorded(in: folder)
        let config = Self.config
        func target(_ text: String, from directory: String = "/") -> String? {
            recorded.target(text, config: config, currentDirectory: directory).map { "\($0.pair.name):\($0.inside ?? "*")" }
        }
        #expect(target("photos") == "photos:*")
        #expect(target("/data/photos/raw/IMG_1.CR2") == "raw:IMG_1.CR2")
        #expect(target("raw", from: "/data/photos") == "raw:*")
        #expect(target("/data/photos/2024/a.jpg")?.hasSuffix(":2024/a.jpg") == true)
        #expect(target("/etc/passwd") == "everything:etc/passwd")
        #expect(target("/") == "everything:*")
        // A configured folder that never ran is no pair; its path is then inside `/`'s.
        #expect(target("never") == "everything:never")
    }
}
