import ExecBackend
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

/// Plugins that crash, hang or write garbage: each failure is a clear, retryable error,
/// the plugin is started again, and the next attempt works. Nothing waits forever.
@Suite("exec plugin failures", .integration)
struct PluginFailureTests {
    @Test("a plugin killed mid-transfer: a retryable connectionLost naming the signal; the retry resumes the upload")
    func killedMidTransfer() async throws {
        let store = TemporaryDirectory("ferry-faulty")
        let scratch = TemporaryDirectory("ferry-faulty-src")
        let backend = TestPlugins.faultyBackend("crash", in: store)
        let request = try TestPlugins.source(scratch, name: "big", size: 8 << 20, seed: 1, to: "VID_1.mp4")
        do {
            _ = try await backend.upload(request, observer: NullTransferObserver())
            Issue.record("the upload succeeded although the plugin was killed")
        } catch {
            #expect(error.code == .connectionLost)
            #expect(error.isRetryable)
            #expect(error.message.contains("killed by signal 9"), "\(error)")
            #expect(error.message.contains("killing myself"), "the plugin's last stderr line: \(error)")
        }
        #expect(try await backend.stat(try RelativePath("VID_1.mp4")) == nil, "a partial file appeared under its final name")
        let observer = CountingObserver()
        let result = try await backend.upload(request, observer: observer)
        #expect(result.resumedFrom > 0, "the retry started from zero")
        #expect(result.resumedFrom + result.bytesSent == 8 << 20)
        #expect(observer.total == result.bytesSent)
        #expect(await backend.restarts == 1)
        #expect(try await fetch(backend, "VID_1.mp4", scratch: scratch) == [UInt8](try Data(contentsOf: URL(fileURLWithPath: request.source))))
    }

    @Test("a plugin that hangs: the request times out, the plugin is killed, the next request gets a new one")
    func hangs() async throws {
        let store = TemporaryDirectory("ferry-faulty")
        let scratch = TemporaryDirectory("ferry-faulty-src")
        let backend = TestPlugins.faultyBackend("hang", in: store, stallTimeout: .seconds(1))
        let request = try TestPlugins.source(scratch, name: "a", size: 5000, seed: 2, to: "a.jpg")
        do {
            _ = try await backend.upload(request, observer: NullTransferObserver())
            Issue.record("the upload to a hung plugin succeeded")
        } catch {
            #expect(error.code == .timeout)
            #expect(error.isRetryable)
            #expect(error.message.contains("said nothing for 1 s"), "\(error)")
        }
        let result = try await backend.upload(request, observer: NullTransferObserver())
        #expect(result.entry.size == 5000)
        #expect(await backend.restarts == 1)
    }

    @Test("a plugin that writes something that is not JSON: a retryable protocol error quoting it; then a restart")
    func garbage() async throws {
        let store = TemporaryDirectory("ferry-faulty")
        let scratch = TemporaryDirectory("ferry-faulty-src")
        let backend = TestPlugins.faultyBackend("garbage", in: store)
        let request = try TestPlugins.source(scratch, name: "a", size: 5000, seed: 3, to: "a.jpg")
        do {
            _ = try await backend.upload(request, observer: NullTransferObserver())
            Issue.record("the upload succeeded although the plugin wrote garbage")
        } catch {
            #expect(error.code == .protocolViolation)
            #expect(error.isRetryable)
            #expect(error.message.contains("not a protocol message: 'Traceback"), "\(error)")
        }
        _ = try await backend.upload(request, observer: NullTransferObserver())
        #expect(try await backend.stat(try RelativePath("a.jpg"))?.size == 5000)
    }

    @Test("a plugin that always hangs never blocks the caller for longer than its stall timeout")
    func alwaysHangs() async throws {
        let store = TemporaryDirectory("ferry-faulty")
        let scratch = TemporaryDirectory("ferry-faulty-src")
        let backend = TestPlugins.faultyBackend("hang", always: true, in: store, stallTimeout: .seconds(1))
        let request = try TestPlugins.source(scratch, name: "a", size: 10, seed: 4, to: "a.jpg")
        for _ in 0..<3 {
            await #expect(throws: BackendError.self) { _ = try await backend.upload(request, observer: NullTransferObserver()) }
        }
        // Other requests still work on the restarted plugin.
        #expect(try await backend.list(.root).isEmpty)
    }

    @Test("a plugin that exits before its hello, every time, is reported broken with a permanent error")
    func cannotStart() async throws {
        let folder = TemporaryDirectory("ferry-plugin-script")
        let path = try TestPlugins.script("sys.stderr.write('missing module frobnitz\\n'); sys.exit(3)", in: folder)
        let backend = ExecBackend(name: "script", executable: path, settings: .init(remoteName: "test"),
                                  backoff: RestartBackoff(base: .milliseconds(10), maximum: .milliseconds(20)))
        var last: BackendError?
        for _ in 0..<3 {
            do {
                _ = try await backend.list(.root)
            } catch {
                last = error
            }
        }
        let error = try #require(last)
        #expect(!error.isRetryable)
        #expect(error.message.contains("failed to start 3 times"), "\(error)")
        #expect(error.message.contains("exited with status 3"), "\(error)")
        #expect(error.message.contains("missing module frobnitz"), "\(error)")
    }

    @Test("a plugin of a protocol this Ferry does not speak gets a permanent error naming both versions")
    func versionMismatch() async throws {
        let folder = TemporaryDirectory("ferry-plugin-script")
        let path = try TestPlugins.script("""
            send({"type": "hello", "protocol": {"min": 7, "max": 9}, "capabilities": []})
            for r in requests(): pass
            """, in: folder)
        let backend = ExecBackend(name: "script", executable: path, settings: .init(remoteName: "test"))
        do {
            _ = try await backend.list(.root)
            Issue.record("a plugin of protocol 7 was used")
        } catch {
            #expect(error.code == .unsupported)
            #expect(!error.isRetryable)
            #expect(error.message.contains("speaks plugin protocol 7–9"), "\(error)")
        }
    }

    @Test("an operation the plugin does not know gets its standard unsupported reply; everything else still works")
    func unknownOperation() async throws {
        let folder = TemporaryDirectory("ferry-plugin-script")
        let path = try TestPlugins.script("""
            send({"type": "hello", "protocol": {"min": 1, "max": 1}, "capabilities": ["future-thing", "server-side-copy"]})
            for r in requests():
                if r["op"] in ("welcome", "mkdir"):
                    reply(r)
                else:
                    send({"type": "reply", "id": r["id"], "ok": False,
                          "error": {"class": "permanent", "code": "unsupported", "message": "unknown op " + r["op"]}})
            """, in: folder)
        let backend = ExecBackend(name: "script", executable: path, settings: .init(remoteName: "test"))
        let hello = try await backend.pluginHello()
        #expect(hello.unknownCapabilities == ["future-thing"])
        do {
            try await backend.move(from: try RelativePath("a"), to: try RelativePath("b"), overwrite: false)
            Issue.record("move was sent to a plugin without server-side-move")
        } catch {
            #expect(error.code == .unsupported)
        }
        #expect(hello.maxConcurrency == 1)
        try await backend.makeDirectory(try RelativePath("a"))
        do {
            try await backend.copy(from: try RelativePath("a"), to: try RelativePath("b"), overwrite: false)
            Issue.record("copy succeeded")
        } catch {
            #expect(error.code == .unsupported)
            #expect(error.message == "unknown op copy")
        }
    }

    @Test("options the plugin refuses are a permanent error naming the remote")
    func refusedOptions() async throws {
        let store = TemporaryDirectory("ferry-cas-store")
        let backend = ExecBackend(name: "cas", executable: TestPlugins.contentStore,
                                  settings: .init(remoteName: "photos", options: ["path": "relative/store"]))
        do {
            _ = try await backend.list(.root)
            Issue.record("the plugin accepted a relative path")
        } catch {
            #expect(!error.isRetryable)
            #expect(error.message.contains("refused remote 'photos'"), "\(error)")
            #expect(error.message.contains("option 'path'"), "\(error)")
        }
        _ = store
    }

    @Test("requests overlap in one process: a plugin that answers only once it holds four requests is not stuck")
    func requestsOverlap() async throws {
        let folder = TemporaryDirectory("ferry-plugin-script")
        let path = try TestPlugins.script("""
            send({"type": "hello", "protocol": {"min": 1, "max": 1}, "capabilities": [], "max_concurrency": 4})
            held = []
            for r in requests():
                if r["op"] == "welcome":
                    reply(r)
                    continue
                held.append(r)
                if len(held) == 4:
                    for h in held:
                        reply(h, entry=None)
                    held = []
            """, in: folder)
        // The plugin is silent until four requests are in, and a loaded machine may take
        // seconds to run the four tasks that send them (5 s failed with two test runs and a
        // CPU burner sharing the 2 cores). The limit only has to end the test if requests
        // never overlap.
        let backend = ExecBackend(name: "script", executable: path,
                                  settings: .init(remoteName: "test", stallTimeout: .seconds(120)))
        try await withThrowingTaskGroup(of: RemoteEntry?.self) { group in
            for index in 0..<8 { group.addTask { try await backend.stat(try RelativePath("f\(index)")) } }
            for try await entry in group { #expect(entry == nil) }
        }
    }

    @Test("a listing that names something outside the folder is refused")
    func hostileListing() async throws {
        let folder = TemporaryDirectory("ferry-plugin-script")
        let path = try TestPlugins.script("""
            send({"type": "hello", "protocol": {"min": 1, "max": 1}})
            for r in requests():
                if r["op"] == "welcome":
                    reply(r)
                elif r["path"] == "a":
                    reply(r, entries=[{"path": "b/secret", "kind": "file", "size": 1}])
                else:
                    reply(r, entries=[{"path": "../../etc/passwd", "kind": "file", "size": 1}])
            """, in: folder)
        let backend = ExecBackend(name: "script", executable: path, settings: .init(remoteName: "test"))
        await #expect(throws: BackendError.self) { _ = try await backend.list(try RelativePath("a")) }
        await #expect(throws: BackendError.self) { _ = try await backend.list(.root) }
    }

    private func fetch(_ backend: ExecBackend, _ path: String, scratch: TemporaryDirectory) async throws -> [UInt8] {
        let entry = try #require(try await backend.stat(try RelativePath(path)))
        let partial = scratch.child("partial-\(UUID().uuidString)")
        try Data().write(to: URL(fileURLWithPath: partial))  // the core creates it; plugins open it
        _ = try await backend.download(DownloadRequest(source: entry.path, partialFile: partial, offset: 0, expected: entry),
                                       observer: NullTransferObserver())
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: partial)))
    }
}
