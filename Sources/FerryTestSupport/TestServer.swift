import Foundation

/// A real web server started for a test from `scripts/test-servers/`, on a free loopback
/// port, stopped when the value is dropped.
public final class TestServer: Sendable {
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        case nginx
        case apache
        /// `upload-server.py`: plain HTTP with a multipart upload endpoint at `/upload`.
        case upload
        public var description: String { rawValue }

        /// The servers that speak WebDAV.
        public static let webDAV: [Kind] = [.nginx, .apache]
    }

    public let kind: Kind
    /// `http://127.0.0.1:PORT`.
    public let origin: String
    /// The server's scratch folder (its data is under `root/`, its access log is `access.log`).
    public let directory: String
    private let scratch: TemporaryDirectory

    /// The repository's root, found from this source file's location.
    public static var repositoryRoot: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }

    /// Starts the server; the script runs and is waited for on a thread of its own
    /// (`onOwnThread`), never on the cooperative pool.
    public init(_ kind: Kind) async throws {
        self.kind = kind
        let scratch = TemporaryDirectory("ferry-\(kind)")
        self.scratch = scratch
        directory = scratch.path
        let result = try await onOwnThread { [directory] in try Self.script("start-\(kind).sh", directory) }
        guard result.status == 0, let line = result.output.split(separator: "\n").last, line.hasPrefix("http://") else {
            throw TestServerError(message: "cannot start \(kind): \(result.error.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        origin = String(line)
    }

    /// Folders the server keeps for itself inside the data folder, invisible over WebDAV:
    /// Apache's mod_dav_fs stores dead properties (Ferry's mtime) in a `.DAV` folder
    /// beside the files. Pass to `TreeComparison` when comparing `root/` with a source.
    /// Name prefixes of files the server writes of its own and may leave when it is killed:
    /// Apache's mod_dav_fs receives a PUT into `.davfs.tmpXXXXXX` beside the target and
    /// renames it when complete; a SIGKILL mid-body leaves it (stop.sh kills a server that
    /// has not stopped 5 s after TERM, which a loaded machine makes happen).
    public var leftoverNamePrefixes: [String] {
        kind == .apache ? [".davfs.tmp"] : []
    }

    public var bookkeepingFolders: Set<String> {
        kind == .apache ? [".DAV"] : []
    }

    /// The URL of a location on the server, e.g. `url("/dav/")`.
    public func url(_ path: String) -> String { origin + path }

    /// Lines of the access log so far, one per request. A line with no request ("- - 400")
    /// is left out: a connection that never sent one is another process on this machine
    /// knocking on the port (seen with two test runs at once), never a client under test.
    public var accessLog: [String] {
        ((try? String(contentsOfFile: directory + "/access.log", encoding: .utf8)) ?? "")
            .split(separator: "\n").filter { !$0.hasPrefix("- ") }.map(String.init)
    }

    /// The number of access-log lines once every request answered so far is logged: a
    /// marker request is sent, and the count is taken when its line appears. nginx runs one
    /// worker, which logs a request when it has sent the answer and before it reads the
    /// next one, so every earlier answered request stands before the marker. (Apache runs
    /// several processes; count its requests through a `FaultProxy` instead.) Lines after
    /// the returned count are the requests that come after it.
    public func logMark() async throws -> Int {
        try await onOwnThread { try self.waitForLogMark() }
    }

    private func waitForLogMark() throws -> Int {
        let marker = "/ferry-log-mark-\(UUID().uuidString)"
        let scratch = TemporaryDirectory("ferry-log-mark")
        let pid = try ChildProcess.spawn(["/usr/bin/curl", "-s", "-o", "/dev/null", "--noproxy", "*", "--head", origin + marker],
                                         output: scratch.child("out"), error: scratch.child("err"))
        _ = ChildProcess.wait(pid)
        // 30 s is a guard against a hang, not a timing.
        for _ in 0..<3000 {
            if let index = accessLog.firstIndex(where: { $0.contains(marker) }) { return index + 1 }
            usleep(10_000)
        }
        throw TestServerError(message: "the marker request \(marker) was never logged by \(kind)")
    }

    /// Stops the server (its data stays); `restart()` brings it back on the same port.
    public func stop() throws {
        _ = try Self.script("stop.sh", directory)
    }

    public func restart() throws {
        let result = try Self.script("start-\(kind).sh", directory)
        guard result.status == 0 else { throw TestServerError(message: "cannot restart \(kind): \(result.error)") }
        let url = result.output.split(separator: "\n").last.map(String.init)
        guard url == origin else {
            throw TestServerError(message: "\(kind) came back on \(url ?? "no URL") instead of \(origin) (port taken meanwhile)")
        }
    }

    deinit {
        Self.stopOnOwnThread(directory, keeping: scratch)
    }

    /// Runs `stop.sh` for what runs from `directory` on a thread of its own and keeps
    /// `scratch` (the folder it reads) until it is done. A deinit runs wherever the last
    /// reference went, most often on one of the cooperative pool's two threads: waiting
    /// there for the script (up to 5 s; SeaweedFS takes 3-4 s to exit) held back every
    /// other test's `await`, and the whole suite took 315 s instead of about 225.
    /// The test process waits for these stops when it exits (`StopsInFlight`), so their
    /// folders are removed too.
    static func stopOnOwnThread(_ directory: String, keeping scratch: TemporaryDirectory) {
        StopsInFlight.begin()
        Thread.detachNewThread {
            _ = try? script("stop.sh", directory)
            // Removed here, not by `scratch`'s deinit: the closure holds it until after it
            // returns, and the process may be gone by then.
            try? FileManager.default.removeItem(atPath: scratch.path)
            StopsInFlight.end()
        }
    }

    /// Runs a server script and waits for that one process. Output goes to files, not
    /// pipes (the daemon it starts inherits the descriptors and would hold a pipe open),
    /// and the wait is a plain `waitpid`: Foundation's `Process` did not notice the exit
    /// of a script that leaves a daemon behind.
    static func script(_ name: String, _ argument: String) throws -> (status: Int32, output: String, error: String) {
        try script(name, arguments: [argument])
    }

    static func script(_ name: String, arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let logs = TemporaryDirectory("ferry-script")
        let outPath = logs.child("out")
        let errPath = logs.child("err")
        let pid = try ChildProcess.spawn(
            ["/bin/bash", repositoryRoot + "/scripts/test-servers/" + name] + arguments, output: outPath, error: errPath)
        let exitCode = ChildProcess.wait(pid)
        let output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let error = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return (exitCode, output, error)
    }
}

public struct TestServerError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
