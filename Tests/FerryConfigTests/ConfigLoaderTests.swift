@testable import FerryConfig
import Foundation
import Testing
@testable import FerryPlanning
import FerryPluginAPI

/// A config problem and where it must be reported.
struct ConfigErrorCase: Sendable, CustomTestStringConvertible {
    var name: String
    var yaml: String
    var line: Int
    var column: Int
    /// Text the message must contain.
    var mentions: String
    /// The dotted key path the error names, when it names one.
    var key: String?

    var testDescription: String { name }
}

@Suite("ConfigLoader")
struct ConfigLoaderTests {
    static let testPlugin = BackendPlugin(
        type: "local", summary: "",
        options: [.init("path", .path, required: true, summary: ""), .init("flavour", .string, values: ["plain", "fancy"], summary: "")],
        capabilities: BackendCapabilities(),
        make: { _ throws(BackendError) -> any Backend in throw BackendError(.unsupported, "x") })

    static let loader = ConfigLoader(registry: BackendRegistry([testPlugin]))

    static func parse(_ yaml: String, baseDirectory: String = "/base") throws(ConfigError) -> Config {
        try loader.parse(yaml, file: "config.yml", baseDirectory: baseDirectory)
    }

    /// The repository root: this file is Tests/FerryCoreTests/ConfigLoaderTests.swift.
    static var repositoryRoot: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    // MARK: The shipped config.yml

    @Test("the repository's config.yml loads and spells out the standard queues")
    func shippedConfig() throws {
        let root = Self.repositoryRoot
        let text = try String(contentsOfFile: root + "/config.yml", encoding: .utf8)
        let config = try Self.parse(text, baseDirectory: root)
        #expect(config.queues == QueueRule.standard)
        #expect(config.items == ItemGrouping.standard)
        #expect(config.defaultQueue == "media")
        #expect(config.sourceFile == "config.yml")
        #expect(config.statePath == root + "/.ferry/state")
        #expect(config.remotes.count == 1)
        let remote = try #require(config.remote(named: "sample-backup"))
        #expect(remote.type == "local")
        #expect(remote.options == ["path": root + "/.ferry/remote"])
        #expect(config.folders.count == 1)
        let folder = try #require(config.folder(named: "sample"))
        #expect(folder.localPath == root + "/sample-media")
        #expect(folder.remote == "sample-backup")
        #expect(folder.remotePath == (try RelativePath("sample-media")))
        #expect(folder.mode == .push)
        #expect(folder.ignore.isEmpty)
        #expect(config.transfers == TransferSettings(maxConcurrent: 4, bandwidthLimit: nil, maxDeleteShare: 0.5))
        #expect(config.retry == RetryPolicy())
        #expect(config.scan == ScanSettings())
    }

    @Test("the shipped config.yml loads through load(file:) too")
    func shippedConfigFromFile() throws {
        let root = Self.repositoryRoot
        let config = try Self.loader.load(file: root + "/config.yml")
        #expect(config.queues == QueueRule.standard)
        #expect(config.folder(named: "sample")?.localPath == root + "/sample-media")
    }

    // MARK: Defaults

    @Test("an empty or comment-only document yields the defaults", arguments: ["", "\n\n", "# nothing here\n", "---\n", "~\n"])
    func emptyDocument(_ yaml: String) throws {
        let config = try Self.parse(yaml)
        #expect(config.statePath == nil)
        #expect(config.remotes.isEmpty)
        #expect(config.folders.isEmpty)
        #expect(config.queues == QueueRule.standard)
        #expect(config.defaultQueue == "media")
        #expect(config.transfers == TransferSettings())
        #expect(config.retry == RetryPolicy())
        #expect(config.scan == ScanSettings())
        #expect(config.sourceFile == "config.yml")
    }

    @Test("empty sections keep their defaults")
    func emptySections() throws {
        let config = try Self.parse("""
            remotes:
            folders:
            transfers: {}
            retry:
            scan: ~
            """)
        #expect(config.remotes.isEmpty)
        #expect(config.transfers == TransferSettings())
        #expect(config.retry == RetryPolicy())
        #expect(config.scan == ScanSettings())
    }

    // MARK: Values

    @Test("relative paths resolve against the base directory; absolute ones stay")
    func relativePaths() throws {
        let config = try Self.parse("""
            state:
              path: .ferry/state
            remotes:
              near:
                type: local
                path: ../remote
              far:
                type: local
                path: /mnt/nas/./backup/
            folders:
              photos:
                path: media/./photos
                remote: near
                remote_path: photos//2024/
              music:
                path: /home/me/Music
                remote: far
            """)
        #expect(config.statePath == "/base/.ferry/state")
        #expect(config.remote(named: "near")?.options["path"] == "/remote")
        #expect(config.remote(named: "far")?.options["path"] == "/mnt/nas/backup")
        #expect(config.remotes.map(\.name) == ["near", "far"])
        let photos = try #require(config.folder(named: "photos"))
        #expect(photos.localPath == "/base/media/photos")
        #expect(photos.remotePath.components == ["photos", "2024"])
        #expect(photos.mode == .push)
        let music = try #require(config.folder(named: "music"))
        #expect(music.localPath == "/home/me/Music")
        #expect(music.remotePath == .root)
        #expect(config.folders.map(\.name) == ["photos", "music"])
    }

    @Test("every section's values are read")
    func allValues() throws {
        let config = try Self.parse("""
            remotes:
              r: {type: local, path: r}
            folders:
              f:
                path: f
                remote: r
                mode: pull
                ignore: "*.tmp"
            queues:
              - name: fast
                match: ["*.jpg", "**/small/**"]
                max_size: 512k
                concurrency: 3
              - name: slow
                match: "*"
                min_size: 1G
            default_queue: fast
            transfers:
              max: 8
              bandwidth: 10M
              max_delete: 25%
              min_free_space: 2G
            retry:
              attempts: 3
              passes: 2
              base_delay: 500ms
              factor: 1.5
              max_delay: 1m
              offline_wait: 30s
            scan:
              follow_symlinks: yes
              ignore: [".cache/**", "*.bak"]
            """)
        #expect(config.folder(named: "f")?.mode == .pull)
        #expect(config.folder(named: "f")?.ignore == ["*.tmp"])
        #expect(config.queues == [
            QueueRule(name: "fast", match: ["*.jpg", "**/small/**"], maxSize: 512 << 10, concurrency: 3),
            QueueRule(name: "slow", match: ["*"], minSize: 1 << 30, concurrency: 1),
        ])
        #expect(config.defaultQueue == "fast")
        #expect(config.transfers == TransferSettings(maxConcurrent: 8, bandwidthLimit: 10 << 20, maxDeleteShare: 0.25,
                                                     minFreeSpace: .bytes(2 << 30)))
        var retry = RetryPolicy(attempts: 3, baseDelay: .milliseconds(500), factor: 1.5, maxDelay: .seconds(60))
        retry.offlineWait = .seconds(30)
        retry.passes = 2
        #expect(config.retry == retry)
        #expect(config.scan == ScanSettings(followSymlinks: true, ignore: [".cache/**", "*.bak"]))
    }

    @Test("min_free_space takes a size or a share of the disk; offline_wait takes a duration or forever")
    func reserveAndOfflineWait() throws {
        #expect(try Self.parse("transfers:\n  min_free_space: 5%\n").transfers.minFreeSpace == .share(0.05))
        #expect(try Self.parse("transfers:\n  min_free_space: 512M\n").transfers.minFreeSpace == .bytes(512 << 20))
        #expect(Config.defaults.transfers.minFreeSpace == .share(0.01))
        #expect(try Self.parse("retry:\n  offline_wait: forever\n").retry.offlineWait == nil)
        #expect(Config.defaults.retry.offlineWait == .seconds(600))
    }

    @Test("the free-space reserve refuses a download that would cut into it, and says what to do")
    func freeSpaceReserve() {
        let reserve = FreeSpaceReserve.share(0.01)
        // A 100 GB disk keeps 1 GB free.
        #expect(reserve.bytes(ofFilesystemSize: 100_000_000_000) == 1_000_000_000)
        #expect(reserve.refusal(needed: 500_000_000, available: 2_000_000_000, totalBytes: 100_000_000_000) == nil)
        let refusal = reserve.refusal(needed: 1_500_000_000, available: 2_000_000_000, totalBytes: 100_000_000_000)
        #expect(refusal?.contains("min_free_space") == true)
        #expect(refusal?.contains("free some space") == true)
        #expect(FreeSpaceReserve.bytes(0).refusal(needed: 10, available: 10, totalBytes: 100) == nil)
        #expect(FreeSpaceReserve.bytes(0).refusal(needed: 11, available: 10, totalBytes: 100) != nil)
    }

    @Test("bandwidth off or 0 means no limit", arguments: ["off", "0"])
    func bandwidthOff(_ value: String) throws {
        let config = try Self.parse("transfers:\n  bandwidth: \(value)\n")
        #expect(config.transfers.bandwidthLimit == nil)
    }

    @Test("without default_queue, custom queues fall back to their last queue when 'media' is gone")
    func defaultQueueFallback() throws {
        let custom = try Self.parse("queues:\n  - name: a\n  - name: b\n")
        #expect(custom.defaultQueue == "b")
        let withMedia = try Self.parse("queues:\n  - name: media\n  - name: b\n")
        #expect(withMedia.defaultQueue == "media")
    }

    @Test("default_queue may come before queues in the file")
    func defaultQueueOrder() throws {
        let config = try Self.parse("default_queue: b\nqueues:\n  - name: a\n  - name: b\n")
        #expect(config.defaultQueue == "b")
    }

    @Test("folders may come before the remotes they name")
    func folderBeforeRemote() throws {
        let config = try Self.parse("""
            folders:
              f: {path: f, remote: r}
            remotes:
              r: {type: local, path: r}
            """)
        #expect(config.folder(named: "f")?.remote == "r")
    }

    @Test("an option with fixed words takes them in any case and hands on the plugin's spelling")
    func fixedWordsInAnyCase() throws {
        let config = try Self.parse("remotes:\n  r:\n    type: local\n    path: /r\n    flavour: FANCY\n")
        #expect(config.remote(named: "r")?.options["flavour"] == "fancy")
    }

    // MARK: Errors

    static let errorCases: [ConfigErrorCase] = [
        ConfigErrorCase(
            name: "a word an option with fixed words does not take",
            yaml: "remotes:\n  r:\n    type: local\n    path: /r\n    flavour: odd\n",
            line: 5, column: 14, mentions: "unknown value 'odd' (expected plain or fancy)", key: "remotes.r.flavour"),
        ConfigErrorCase(
            name: "unknown top-level key",
            yaml: "transfers:\n  max: 4\nbogus: 1\n",
            line: 3, column: 1, mentions: "unknown key", key: "bogus"),
        ConfigErrorCase(
            name: "unknown nested key",
            yaml: "transfers:\n  max: 4\n  maximum: 5\n",
            line: 3, column: 3, mentions: "unknown key", key: "transfers.maximum"),
        ConfigErrorCase(
            name: "unknown key inside a folder",
            yaml: "remotes:\n  r: {type: local, path: /r}\nfolders:\n  f:\n    path: /f\n    remote: r\n    colour: red\n",
            line: 7, column: 5, mentions: "unknown key", key: "folders.f.colour"),
        ConfigErrorCase(
            name: "unknown option for a remote type",
            yaml: "remotes:\n  r:\n    type: local\n    path: /r\n    url: http://x\n",
            line: 5, column: 5, mentions: "unknown key for a 'local' remote", key: "remotes.r.url"),
        ConfigErrorCase(
            name: "wrong type: max: lots",
            yaml: "transfers:\n  max: lots\n",
            line: 2, column: 8, mentions: "expected a whole number, found 'lots'", key: "transfers.max"),
        ConfigErrorCase(
            name: "a section that is not a mapping",
            yaml: "# comment\ntransfers: 5\n",
            line: 2, column: 12, mentions: "expected a mapping", key: "transfers"),
        ConfigErrorCase(
            name: "a list where text is expected",
            yaml: "default_queue: [a, b]\n",
            line: 1, column: 16, mentions: "expected text", key: "default_queue"),
        ConfigErrorCase(
            name: "out-of-range integer",
            yaml: "transfers:\n  max: 999\n",
            line: 2, column: 8, mentions: "out of range", key: "transfers.max"),
        ConfigErrorCase(
            name: "out-of-range queue concurrency",
            yaml: "queues:\n  - name: a\n    concurrency: 0\n",
            line: 3, column: 18, mentions: "out of range", key: "queues[0].concurrency"),
        ConfigErrorCase(
            name: "retry attempts out of range",
            yaml: "retry:\n  attempts: 0\n",
            line: 2, column: 13, mentions: "out of range", key: "retry.attempts"),
        ConfigErrorCase(
            name: "retry passes out of range",
            yaml: "retry:\n  passes: 0\n",
            line: 2, column: 11, mentions: "out of range", key: "retry.passes"),
        ConfigErrorCase(
            name: "missing required type",
            yaml: "remotes:\n  backup:\n    path: /x\n",
            line: 3, column: 5, mentions: "missing required key 'type'", key: "remotes.backup"),
        ConfigErrorCase(
            name: "unknown remote type",
            yaml: "remotes:\n  backup:\n    type: ftp\n    path: /x\n",
            line: 3, column: 11, mentions: "unknown remote type 'ftp'", key: "remotes.backup.type"),
        ConfigErrorCase(
            name: "missing remote option path",
            yaml: "remotes:\n  backup:\n    type: local\n",
            line: 3, column: 5, mentions: "missing required key 'path'", key: "remotes.backup"),
        ConfigErrorCase(
            name: "folder naming a missing remote",
            yaml: "remotes:\n  backup:\n    type: local\n    path: /r\nfolders:\n  photos:\n    path: /p\n    remote: nas\n",
            line: 8, column: 13, mentions: "no remote named 'nas'", key: "folders.photos.remote"),
        ConfigErrorCase(
            name: "folder without a remote",
            yaml: "folders:\n  photos:\n    path: /p\n",
            line: 3, column: 5, mentions: "missing required key 'remote'", key: "folders.photos"),
        ConfigErrorCase(
            name: "unknown mode",
            yaml: "remotes:\n  r: {type: local, path: /r}\nfolders:\n  f:\n    path: /f\n    remote: r\n    mode: mirror\n",
            line: 7, column: 11, mentions: "unknown mode 'mirror'", key: "folders.f.mode"),
        ConfigErrorCase(
            name: "invalid remote_path",
            yaml: "remotes:\n  r: {type: local, path: /r}\nfolders:\n  f:\n    path: /f\n    remote: r\n    remote_path: a/../b\n",
            line: 7, column: 18, mentions: "'..'", key: "folders.f.remote_path"),
        ConfigErrorCase(
            name: "bad glob in a queue",
            yaml: "queues:\n  - name: media\n    match: [\"*.jpg\", \"*.{jpg\"]\n",
            line: 3, column: 22, mentions: "invalid glob '*.{jpg'", key: "queues[0].match"),
        ConfigErrorCase(
            name: "bad glob in scan.ignore",
            yaml: "scan:\n  ignore:\n    - \"*.tmp\"\n    - \"[abc\"\n",
            line: 4, column: 7, mentions: "invalid glob '[abc'", key: "scan.ignore"),
        ConfigErrorCase(
            name: "duplicate queue name",
            yaml: "queues:\n  - name: media\n  - name: media\n",
            line: 3, column: 11, mentions: "defined twice", key: "queues[1].name"),
        ConfigErrorCase(
            name: "queue without a name",
            yaml: "queues:\n  - name: a\n  - match: \"*\"\n",
            line: 3, column: 5, mentions: "missing required key 'name'", key: "queues[1]"),
        ConfigErrorCase(
            name: "queues that are not a list",
            yaml: "queues:\n  media: {}\n",
            line: 2, column: 3, mentions: "expected a list of queues", key: "queues"),
        ConfigErrorCase(
            name: "default_queue naming a missing queue",
            yaml: "default_queue: fast\n",
            line: 1, column: 16, mentions: "no queue named 'fast'", key: "default_queue"),
        ConfigErrorCase(
            name: "bad size",
            yaml: "queues:\n  - name: a\n    max_size: huge\n",
            line: 3, column: 15, mentions: "expected a size", key: "queues[0].max_size"),
        ConfigErrorCase(
            name: "bad duration",
            yaml: "retry:\n  base_delay: soon\n",
            line: 2, column: 15, mentions: "expected a duration", key: "retry.base_delay"),
        ConfigErrorCase(
            name: "bad percentage",
            yaml: "transfers:\n  max_delete: 150%\n",
            line: 2, column: 15, mentions: "percentage", key: "transfers.max_delete"),
        ConfigErrorCase(
            name: "bad free-space reserve",
            yaml: "transfers:\n  min_free_space: 80%\n",
            line: 2, column: 19, mentions: "percentage from 0% to 50%", key: "transfers.min_free_space"),
        ConfigErrorCase(
            name: "bad boolean",
            yaml: "scan:\n  follow_symlinks: maybe\n",
            line: 2, column: 20, mentions: "expected true or false", key: "scan.follow_symlinks"),
        ConfigErrorCase(
            name: "bad factor",
            yaml: "retry:\n  factor: 0.5\n",
            line: 2, column: 11, mentions: "from 1 to 10", key: "retry.factor"),
        ConfigErrorCase(
            name: "max_delay shorter than base_delay",
            yaml: "retry:\n  base_delay: 10s\n  max_delay: 1s\n",
            line: 2, column: 3, mentions: "must not be shorter than base_delay", key: "retry.max_delay"),
        ConfigErrorCase(
            name: "a document that is a list",
            yaml: "- a\n- b\n",
            line: 1, column: 1, mentions: "expected a mapping", key: nil),
        ConfigErrorCase(
            name: "unknown conflict policy",
            yaml: "remotes:\n  r: {type: local, path: /r}\nfolders:\n  f:\n    path: /f\n    remote: r\n    mode: sync\n    conflict: newest\n",
            line: 8, column: 15, mentions: "expected one of: keep-both, newer, local, remote, ask", key: "folders.f.conflict"),
        ConfigErrorCase(
            name: "per-queue conflict policy for a queue that does not exist",
            yaml: "remotes:\n  r: {type: local, path: /r}\nfolders:\n  f:\n    path: /f\n    remote: r\n    conflict:\n      thumbs: remote\n",
            line: 8, column: 7, mentions: "no queue named 'thumbs'", key: "folders.f.conflict.thumbs"),
        ConfigErrorCase(
            name: "trash retention that is not a duration",
            yaml: "remotes:\n  r: {type: local, path: /r}\nfolders:\n  f:\n    path: /f\n    remote: r\n    trash:\n      keep: a month\n",
            line: 8, column: 13, mentions: "expected a duration", key: "folders.f.trash.keep"),
        ConfigErrorCase(
            name: "unknown item stem rule",
            yaml: "items:\n  stem: middle-dot\n",
            line: 2, column: 9, mentions: "expected first-dot or last-dot", key: "items.stem"),
        ConfigErrorCase(
            name: "unknown sync mode",
            yaml: "remotes:\n  r: {type: local, path: /r}\nfolders:\n  f:\n    path: /f\n    remote: r\n    mode: mirror\n",
            line: 7, column: 11, mentions: "expected push, pull or sync", key: "folders.f.mode"),
    ]

    @Test("each problem is reported at the offending node", arguments: errorCases)
    func errorLocation(_ row: ConfigErrorCase) throws {
        let error = try #require(throws: ConfigError.self) { try Self.parse(row.yaml) }
        #expect(error.file == "config.yml")
        #expect(error.line == row.line)
        #expect(error.column == row.column)
        #expect(error.key == row.key)
        #expect(error.message.contains(row.mentions), "message: \(error.message)")
        let description = error.description
        #expect(!description.contains("\n"), "description: \(description)")
        #expect(description.hasPrefix("config.yml:\(row.line):\(row.column): "), "description: \(description)")
        if let key = row.key {
            #expect(description.contains("'\(key)'"))
        }
    }

    @Test("invalid YAML syntax is reported where the parser stopped")
    func syntaxError() throws {
        let error = try #require(throws: ConfigError.self) { try Self.parse("transfers:\n  max: 4\n  bandwidth: a: b\n") }
        #expect(error.line == 3)
        #expect(error.column == 15)
        #expect(error.message.contains("invalid YAML"))
        #expect(!error.description.contains("\n"))
        #expect(error.description.hasPrefix("config.yml:3:15: "))
    }

    @Test("two-way sync settings: mode, conflict policies per folder and queue, trash, items")
    func twoWaySettings() throws {
        let config = try Self.parse("""
            remotes:
              r: {type: local, path: /r}
            queues:
              - name: thumbnails
                match: ["**/.thumbnails/**"]
                concurrency: 1
                conflict: remote
              - name: media
                match: ["*.jpg"]
                concurrency: 1
            folders:
              phone:
                path: /phone
                remote: r
                mode: sync
                conflict:
                  default: ask
                  media: newer
                trash:
                  local: /var/trash/phone
                  remote: backup/trash
                  keep: 7d
              camera:
                path: /camera
                remote: r
                mode: sync
                trash: off
            items:
              stem: last-dot
              thumbnail_folders: [previews]
            """)
        let phone = try #require(config.folder(named: "phone"))
        #expect(phone.mode == .sync)
        let policies = ConflictPolicies(folder: phone.conflict, rules: config.queues)
        #expect(policies.policy(forQueue: "media") == .newer)
        #expect(policies.policy(forQueue: "thumbnails") == .ask)
        #expect(ConflictPolicies(folder: .init(), rules: config.queues).policy(forQueue: "thumbnails") == .remote)
        #expect(phone.trash.localFolder(root: "/phone") == "/var/trash/phone")
        #expect(phone.trash.remoteFolder(root: try RelativePath("x")) == (try RelativePath("backup/trash")))
        #expect(phone.trash.keepSeconds == 7.0 * 86_400)
        let camera = try #require(config.folder(named: "camera"))
        #expect(!camera.trash.enabled)
        #expect(camera.trash.remoteFolder(root: try RelativePath("cam")) == (try RelativePath("cam/.ferry-trash")))
        #expect(camera.trash.localFolder(root: "/camera") == "/camera/.ferry-trash")
        #expect(config.items == ItemGrouping(stem: .lastDot, thumbnailFolders: ["previews"], stemSuffixes: ["_thumb", "-thumb"]))
    }

    @Test("an unterminated quote is a located syntax error")
    func unterminatedQuote() throws {
        let error = try #require(throws: ConfigError.self) { try Self.parse("state:\n  path: \"abc\n") }
        #expect(error.line != nil)
        #expect(error.column != nil)
        #expect(error.message.contains("invalid YAML"))
        #expect(!error.description.contains("\n"))
        #expect(error.description.hasPrefix("config.yml:\(error.line ?? 0):\(error.column ?? 0): "))
    }

    @Test(
        "a duplicate key is reported at its second occurrence")
    func duplicateKey() throws {
        let yaml = "transfers:\n  max: 4\n  bandwidth: off\n  max: 5\n"
        let error = try #require(throws: ConfigError.self) { try Self.parse(yaml) }
        #expect(error.line == 4)
        #expect(error.column == 3)
        #expect(error.description.hasPrefix("config.yml:4:3: "), "description: \(error.description)")
        #expect(!error.description.contains("bandwidth"), "the message must not quote the whole file")
    }

    @Test("a duplicate key is refused, on one line")
    func duplicateKeyRefused() throws {
        let yaml = "transfers:\n  max: 4\n  max: 5\n"
        let error = try #require(throws: ConfigError.self) { try Self.parse(yaml) }
        #expect(error.file == "config.yml")
        #expect(!error.description.contains("\n"))
        #expect(error.description.hasPrefix("config.yml"))
    }

    @Test("a ConfigError without a location still names the file")
    func descriptionWithoutLocation() {
        #expect(ConfigError(file: "c.yml", message: "oops").description == "c.yml: oops")
        #expect(ConfigError(file: "c.yml", line: 3, message: "oops").description == "c.yml:3: oops")
        #expect(ConfigError(file: "c.yml", line: 3, column: 4, key: "a.b", message: "x\ny").description == "c.yml:3:4: 'a.b': x y")
    }

    @Test("a missing config file is a ConfigError naming the path")
    func missingFile() throws {
        let error = try #require(throws: ConfigError.self) {
            try Self.loader.load(file: "/nonexistent-ferry-dir/config.yml")
        }
        #expect(error.file == "/nonexistent-ferry-dir/config.yml")
        #expect(error.line == nil)
    }

    @Test("default search paths: ./config.yml, then XDG_CONFIG_HOME or ~/.config")
    func searchPaths() {
        #expect(ConfigLoader.defaultSearchPaths(environment: ["XDG_CONFIG_HOME": "/xdg", "HOME": "/home/me"], currentDirectory: "/cwd")
            == ["/cwd/config.yml", "/xdg/ferry/config.yml"])
        #expect(ConfigLoader.defaultSearchPaths(environment: ["HOME": "/home/me"], currentDirectory: "/cwd")
            == ["/cwd/config.yml", "/home/me/.config/ferry/config.yml"])
        #expect(ConfigLoader.defaultSearchPaths(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/h"], currentDirectory: "/cwd")
            == ["/cwd/config.yml", "/h/.config/ferry/config.yml"])
        #expect(ConfigLoader.defaultSearchPaths(environment: [:], currentDirectory: "/cwd") == ["/cwd/config.yml"])
    }
}
