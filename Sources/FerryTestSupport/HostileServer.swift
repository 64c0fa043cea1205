import Foundation

/// `scripts/test-servers/hostile-server.py`: a WebDAV server that lies in ways no real
/// server does (a listed size it does not keep to, a tree without end), for the cases a
/// real server cannot imitate. Stopped when dropped.
public final class HostileServer: Sendable {
    public let origin: String
    private let pid: pid_t
    private let scratch: TemporaryDirectory

    /// `mode` and `options` go to the script as they are, e.g.
    /// `HostileServer("oversize", ["--listed", "5", "--body", "67108864"])`.
    public init(_ mode: String, _ options: [String] = []) async throws {
        let scratch = TemporaryDirectory("ferry-hostile")
        self.scratch = scratch
        (origin, pid) = try await ScriptedServer.start("hostile-server.py", [mode, "--log", scratch.child("requests.log")] + options,
                                                       in: scratch, name: "hostile server")
    }

    /// A line per request answered so far (`METHOD RAW-PATH STATUS BYTES`), written before
    /// the answer's body.
    public var requests: [String] {
        ((try? String(contentsOfFile: scratch.child("requests.log"), encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }

    /// The URL of a location, e.g. `url("/dav/")`.
    public func url(_ path: String) -> String { origin + path }

    /// The `dav://` form of `url(path)`, for the command line.
    public func davURL(_ path: String) -> String { "dav://" + origin.dropFirst("http://".count) + path }

    deinit {
        kill(pid, SIGTERM)
        _ = ChildProcess.wait(pid)
    }
}
