import Foundation

/// `scripts/test-servers/fault-proxy.py` in front of a test server: a share of requests get
/// a 500, a 503 or a dropped connection instead of reaching the server. Stopped when dropped.
///
/// With `share: 0` it is a request counter: `requests` holds a line per request
/// (`METHOD RAW-PATH OUTCOME`), written before the client hears the answer, so a test that
/// counts once its client has an answer reads an exact count without waiting for a server
/// to flush its access log.
public final class FaultProxy: Sendable {
    public let origin: String
    private let pid: pid_t
    private let scratch: TemporaryDirectory

    /// `options` go to the script as they are, e.g. `["--script", "MOVE=lost,500"]` to
    /// replay an exact sequence of faults.
    public init(upstream: String, share: Double, seed: Int = 1, options: [String] = []) async throws {
        let scratch = TemporaryDirectory("ferry-proxy")
        self.scratch = scratch
        (origin, pid) = try await ScriptedServer.start(
            "fault-proxy.py", [upstream, String(share), String(seed), "--log", scratch.child("requests.log")] + options,
            in: scratch, name: "fault proxy")
    }

    /// A proxy in front of an S3 store that lets the first `parts` part uploads through and
    /// holds the next until `gate/release` exists, writing `gate/held` when it holds it: a
    /// client killed on `gate/held` leaves exactly `parts` parts stored.
    public static func holdingPartUpload(after parts: Int, upstream: String, gate: String) async throws -> FaultProxy {
        try FileManager.default.createDirectory(atPath: gate, withIntermediateDirectories: true)
        return try await FaultProxy(upstream: upstream, share: 0,
                                    options: ["--keep-host", "--hold", "^PUT .*[?&]partNumber=:\(parts)", "--gate", gate])
    }

    /// The requests that reached the proxy and were answered (or failed) so far.
    public var requests: [String] {
        ((try? String(contentsOfFile: scratch.child("requests.log"), encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }

    /// The URL of a location behind the proxy, e.g. `url("/dav/")`.
    public func url(_ path: String) -> String { origin + path }

    deinit {
        kill(pid, SIGTERM)
        _ = ChildProcess.wait(pid)
    }
}
