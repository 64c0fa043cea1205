import ExecBackend
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Synchronization

/// The plugins the tests run: the example content-addressed store, the fault-injecting
/// proxy in front of it, and small throwaway scripts.
enum TestPlugins {
    static let contentStore = TestServer.repositoryRoot + "/Plugins/ContentStorePlugin/ferry-backend-cas"
    static let faulty = TestServer.repositoryRoot + "/scripts/test-plugins/ferry-backend-faulty"

    /// The content store on a fresh folder, owned by the returned workspace.
    static func contentStoreBackend(in store: TemporaryDirectory, stallTimeout: Duration = .seconds(30)) -> ExecBackend {
        ExecBackend(name: "cas", executable: contentStore,
                    settings: .init(remoteName: "test", options: ["path": store.path], stallTimeout: stallTimeout))
    }

    /// The content store behind the faulty proxy, which misbehaves on its first upload.
    static func faultyBackend(_ fault: String, always: Bool = false, in store: TemporaryDirectory,
                              stallTimeout: Duration = .seconds(30)) -> ExecBackend {
        var options = ["path": store.child("store"), "inner": contentStore, "fault": fault, "fault_state": store.path]
        if always { options["fault_always"] = "true" }
        return ExecBackend(name: "faulty", executable: faulty,
                           settings: .init(remoteName: "test", options: options, stallTimeout: stallTimeout),
                           backoff: RestartBackoff(base: .milliseconds(50), maximum: .milliseconds(200)))
    }

    /// A one-off plugin: `body` is Python that runs after `send(obj)` and `requests()` are defined.
    static func script(_ body: String, in folder: TemporaryDirectory, name: String = "ferry-backend-script") throws -> String {
        let path = folder.child(name)
        let text = """
            #!/usr/bin/env python3
            import json, sys, os, time
            def send(obj):
                sys.stdout.write(json.dumps(obj) + "\\n")
                sys.stdout.flush()
            def requests():
                for line in sys.stdin:
                    yield json.loads(line)
            def reply(request, **fields):
                send(dict({"type": "reply", "id": request["id"], "ok": True}, **fields))

            """ + body + "\n"
        // Written through a close-on-exec descriptor, so that no child spawned meanwhile by
        // another test keeps it open for writing (exec would then fail: "Text file busy").
        let bytes = Array(text.utf8)
        try OpenFile(path, mode: .writeTruncate, permissions: 0o755).write(bytes, count: bytes.count, at: 0)
        return path
    }

    /// A source file for an upload request.
    static func source(_ folder: TemporaryDirectory, name: String, size: Int, seed: UInt64,
                       to destination: String) throws -> UploadRequest {
        let path = folder.child(name)
        try SampleFile.write(at: path, size: size, seed: seed, modified: 1_700_000_000.5)
        guard let meta = try LocalFileSystem.metadata(path) else { throw BackendError(.notFound, "no source") }
        return UploadRequest(source: path, destination: try RelativePath(destination), size: meta.size,
                             modifiedNanos: meta.modifiedNanos, mayResume: true)
    }
}

/// Counts the bytes a transfer reports.
final class CountingObserver: TransferObserver {
    private let bytes = Mutex<Int64>(0)
    func bytesTransferred(_ count: Int) -> Duration {
        bytes.withLock { $0 += Int64(count) }
        return .zero
    }
    var isCancelled: Bool { false }
    var total: Int64 { bytes.withLock { $0 } }
}
