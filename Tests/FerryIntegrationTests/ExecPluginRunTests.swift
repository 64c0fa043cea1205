import FerryTestSupport
import Foundation
import Testing

/// Push, pull and resume through an external plugin (the Python content store), and what
/// a run does when the plugin crashes, hangs or writes garbage: a clear message, a retry,
/// a complete tree, and never a hang.
@Suite("ferry with an exec: plugin", .integration)
struct ExecPluginRunTests {
    static let contentStoreFolder = TestServer.repositoryRoot + "/Plugins/ContentStorePlugin"
    static let faulty = TestServer.repositoryRoot + "/scripts/test-plugins/ferry-backend-faulty"

    /// A config with one exec remote (`extra` adds option lines) and folders `media` (push
    /// from src) and `back` (pull into dst).
    func config(_ work: Workspace, type: String = "exec:cas", pluginDir: String = contentStoreFolder,
                extra: [String] = []) throws -> String {
        let path = work.directory.child("config.yml")
        let lines = [
            "remotes:",
            "  store:",
            "    type: \(type)",
            "    path: store",
            "    plugin_dir: \(pluginDir)",
        ] + extra.map { "    " + $0 } + [
            "folders:",
            "  media:",
            "    path: src",
            "    remote: store",
            "  back:",
            "    path: dst",
            "    remote: store",
            "    mode: pull",
            "retry:",
            "  attempts: 4",
            "  passes: 2",
            "  base_delay: 100ms",
            "  max_delay: 500ms",
            "  offline_wait: 20s",
        ]
        try FileManager.default.createDirectory(atPath: work.source, withIntermediateDirectories: true)
        try lines.joined(separator: "\n").appending("\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// `stallTimeout`: seconds of silence after which ferry kills the plugin.
    func faultyConfig(_ work: Workspace, fault: String, always: Bool = false, minSize: Int = 0,
                      stallTimeout: Int = 2) throws -> String {
        try config(work, type: "exec:faulty", pluginDir: (Self.faulty as NSString).deletingLastPathComponent, extra: [
            "inner: \(Self.contentStoreFolder)/ferry-backend-cas",
            "fault: \(fault)",
            "fault_state: \(work.directory.path)",
            "fault_always: \(always)",
            "fault_min_size: \(minSize)",
            "stall_timeout: \(stallTimeout)",
        ])
    }

    @Test("push, a no-op push and a pull round-trip a tree through exec:cas")
    func pushPullRoundTrip() async throws {
        let work = Workspace()
        let written = try await TreeGenerator.generate(at: work.source, .init(fileCount: 60, largeFileSizes: [3 << 20], seed: 71))
        let config = try config(work)
        let push = try await work.ferry(["push", "media", "--config", config, "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        #expect(push.int("uploaded") == written.count)

        let again = try await work.ferry(["push", "media", "--config", config, "--state", work.state, "--json"])
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(again.int("uploaded") == 0)

        let pull = try await work.ferry(["pull", "back", "--config", config, "--state", work.state, "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == written.count)
        #expect(try TreeComparison.differences(work.source, work.destination) == [])
        #expect(try work.temporaryFiles(in: work.destination) == [])
    }

    @Test("the plugin killed mid-transfer: the run says so, retries, and continues the partial upload")
    func pluginKilledMidTransfer() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/VID_0001.mp4", size: 8 << 20, seed: 5, modified: 1_700_000_000.5)
        for index in 0..<5 { try TreeGenerator.write(at: work.source + "/IMG_\(index).jpg", size: 2000, seed: UInt64(index)) }
        let config = try faultyConfig(work, fault: "crash", minSize: 1 << 20)
        let push = try await work.ferry(["push", "media", "--config", config, "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        let retries = push.events(named: "retrying").compactMap { $0["error"] as? String }
        #expect(retries.contains { $0.contains("ferry-backend-faulty was killed by signal 9") }, "\(push.diagnostics)")
        let video = try #require(push.events(named: "transferred").first { $0["path"] as? String == "VID_0001.mp4" })
        #expect(((video["resumed_from"] as? NSNumber)?.intValue ?? 0) > 0, "the retry started over: \(video)")
        #expect(push.int("uploaded") == 6)

        let pull = try await work.ferry(["pull", "back", "--config", config, "--state", work.state, "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(try TreeComparison.differences(work.source, work.destination) == [])
    }

    @Test("ferry killed -9 in the middle of an upload through the plugin: the next push continues it")
    func ferryKilledMidUpload() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/VID_0001.mp4", size: 6 << 20, seed: 9, modified: 1_700_000_000.5)
        // The faulty plugin freezes the upload after its first progress message, so the
        // kill lands with a partial upload on the plugin's side, whatever the machine's speed.
        // Ferry must not end the freeze itself first: with a stall timeout of 2 s, a test
        // whose task waited that long for a thread saw ferry restart the plugin, finish,
        // and exit 0 before the kill.
        let config = try faultyConfig(work, fault: "freeze", minSize: 1 << 20, stallTimeout: 3_600)
        let running = try FerryProcess(["push", "media", "--config", config, "--state", work.state, "--json"],
                                       in: work.directory.path)
        let frozen = work.directory.child("frozen")
        await when({ FileManager.default.fileExists(atPath: frozen) }, do: { running.killHard() })
        let killed = await running.wait()
        #expect(killed.status == 128 + 9, "\(killed.diagnostics)")

        let resumed = try await work.ferry(["push", "media", "--config", config, "--state", work.state, "--json"])
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        let event = try #require(resumed.events(named: "transferred").first, "\(resumed.diagnostics)")
        let resumedFrom = (event["resumed_from"] as? NSNumber)?.intValue ?? 0
        let sent = (event["bytes"] as? NSNumber)?.intValue ?? 0
        #expect(resumedFrom >= 1 << 20, "\(event)")
        #expect(resumedFrom + sent == 6 << 20)

        let pull = try await work.ferry(["pull", "back", "--config", config, "--state", work.state, "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(try TreeComparison.differences(work.source, work.destination) == [])
    }

    @Test("a plugin that hangs, or writes garbage, once: a clear message, a retry, everything sent", arguments: ["hang", "garbage"])
    func misbehavesOnce(_ fault: String) async throws {
        let work = Workspace()
        for index in 0..<8 { try TreeGenerator.write(at: work.source + "/IMG_\(index).jpg", size: 3000 + index, seed: UInt64(index)) }
        let config = try faultyConfig(work, fault: fault)
        let push = try await work.ferry(["push", "media", "--config", config, "--state", work.state, "--json"])
        #expect(push.status == 0, "\(push.diagnostics)")
        let expected = fault == "hang" ? "ferry-backend-faulty said nothing for 2 s" : "ferry-backend-faulty wrote a line that is not a protocol message"
        let messages = push.events(named: "retrying").compactMap { $0["error"] as? String }
        #expect(messages.contains { $0.contains(expected) }, "\(push.diagnostics)")
        #expect(push.int("uploaded") == 8)
    }

    @Test("a plugin that writes past a file's listed size is stopped at once, the file retried, nothing oversized kept")
    func floodingDownloadIsStopped() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/IMG_1.jpg", size: 5000, seed: 1)
        let config = try faultyConfig(work, fault: "flood")
        #expect(try await work.ferry(["push", "media", "--config", config, "--state", work.state]).status == 0)
        let pull = try await work.ferry(["pull", "back", "--config", config, "--state", work.state, "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        // Ferry cancelled the flood (the plugin heard it), rather than the plugin stopping
        // on its own 1 GiB later; the retry brought the real file.
        #expect(FileManager.default.fileExists(atPath: work.directory.child("flood-cancelled")), "\(pull.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: work.directory.child("flood-finished")))
        let messages = pull.events(named: "retrying").compactMap { $0["error"] as? String }
        #expect(messages.contains { $0.contains("of a file listed as 5000; stopped") }, "\(pull.diagnostics)")
        #expect(try TreeComparison.differences(work.source, work.destination) == [])
        #expect(try work.temporaryFiles(in: work.destination) == [])
    }

    @Test("a plugin that hangs on every upload: the run ends with exit 1 and the reason after its attempts, never hangs")
    func alwaysHangs() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/IMG_1.jpg", size: 100, seed: 1)
        let config = try faultyConfig(work, fault: "hang", always: true)
        let push = try await work.ferry(["push", "media", "--config", config, "--state", work.state, "--json"])
        #expect(push.status == 1, "\(push.diagnostics)")
        let failed = try #require(push.events(named: "failed").first, "\(push.diagnostics)")
        #expect((failed["error"] as? String)?.contains("ferry-backend-faulty said nothing for 2 s") == true, "\(failed)")
        #expect((failed["attempt"] as? NSNumber)?.intValue == 8, "retries are bounded by retry.attempts × passes: \(failed)")
        #expect(push.events(named: "retrying").count == 7)
        let status = try await work.ferry(["status", "--config", config, "--state", work.state, "--json"])
        #expect(status.status == 0 || status.status == 1, "\(status.diagnostics)")
    }

    @Test("ferry plugins lists the external plugin with its capabilities; plugin-test passes it")
    func pluginsAndConformanceKit() async throws {
        let work = Workspace()
        let environment = ["FERRY_PLUGIN_PATH": Self.contentStoreFolder]
        let listed = try await FerryProcess.run(["plugins", "--json"], in: work.directory.path, environment: environment)
        #expect(listed.status == 0, "\(listed.diagnostics)")
        let cas = try #require(listed.events.first { $0["type"] as? String == "exec:cas" }, "\(listed.diagnostics)")
        #expect(cas["kind"] as? String == "external")
        #expect((cas["capabilities"] as? [String])?.contains("resumable-upload") == true)
        #expect(listed.events.contains { $0["type"] as? String == "local" })

        let tested = try await FerryProcess.run(["plugin-test", "cas"], in: work.directory.path, environment: environment)
        #expect(tested.status == 0, "\(tested.diagnostics)")
        // Every check runs against this plugin (it claims ranged downloads and mtimes) but
        // the ranged read, which the plugin protocol has no request for.
        let lines = tested.standardOutput.split(separator: "\n")
        #expect(lines.contains { $0.hasSuffix(" passed, 0 failed, 1 skipped") }, "\(tested.diagnostics)")
        #expect(lines.filter { $0.hasPrefix("skip ") }.allSatisfy { $0.contains("ranged read") }, "\(tested.diagnostics)")
        #expect(!tested.standardOutput.contains("FAIL"))
    }

    @Test("plugin-test reports a plugin that writes garbage on every upload as failing, and ends")
    func conformanceKitFailsABrokenPlugin() async throws {
        let work = Workspace()
        let tested = try await FerryProcess.run([
            "plugin-test", "faulty", "--json",
            "--option", "inner=\(Self.contentStoreFolder)/ferry-backend-cas",
            "--option", "fault=garbage", "--option", "fault_always=true",
            "--option", "fault_state=\(work.directory.path)",
        ], in: work.directory.path, environment: ["FERRY_PLUGIN_PATH": (Self.faulty as NSString).deletingLastPathComponent])
        #expect(tested.status == 1, "\(tested.diagnostics)")
        let summary = try #require(tested.events(named: "summary").last)
        #expect(((summary["failed"] as? NSNumber)?.intValue ?? 0) > 0)
        let failure = try #require(tested.events(named: "check").first { ($0["passed"] as? Bool) == false })
        #expect((failure["message"] as? String)?.contains("not a protocol message") == true, "\(failure)")
    }

    @Test("an exec remote whose executable is missing: a one-line error that says where it looked")
    func missingExecutable() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/IMG_1.jpg", size: 100, seed: 1)
        let config = try config(work, type: "exec:nowhere")
        let push = try await work.ferry(["push", "media", "--config", config, "--state", work.state])
        #expect(push.status != 0)
        #expect(push.standardError.contains("no executable ferry-backend-nowhere"), "\(push.diagnostics)")
    }
}
