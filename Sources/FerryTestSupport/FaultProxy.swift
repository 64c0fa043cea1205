import Foundation

/// `scripts/test-servers/fault-proxy.py` in front of a test server: a share of requests get
/// a 500, a 503 or a dropped connection instead of reaching the server. Stopped when dropped.
public final class FaultProxy: Sendable {
    public let origin: String
    private let pid: pid_t
    private let scratch: TemporaryDirectory

    public init(upstream: String, share: Double, seed: Int = 1) throws {
        scratch = TemporaryDirectory("ferry-proxy")
        let urlFile = scratch.child("url")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, urlFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, scratch.child("err"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let arguments = ["/usr/bin/env", "python3", TestServer.repositoryRoot + "/scripts/test-servers/fault-proxy.py",
                         upstream, String(share), String(seed)]
        var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var child: pid_t = 0
        guard posix_spawn(&child, "/usr/bin/env", &actions, nil, &cArguments, environ) == 0 else {
            throw TestServerError(message: "cannot start the fault proxy")
        }
        pid = child
        for _ in 0..<500 {
            if let text = try? String(contentsOfFile: urlFile, encoding: .utf8), text.hasSuffix("\n") {
                origin = text.trimmingCharacters(in: .whitespacesAndNewlines)
                return
            }
            usleep(10_000)
        }
        kill(child, SIGKILL)
        throw TestServerError(message: "the fault proxy did not start: \((try? String(contentsOfFile: scratch.child("err"), encoding: .utf8)) ?? "")")
    }

    deinit {
        // SIGKILL, not SIGTERM: posix_spawn hands the child the spawning thread's blocked
        // signals, and a test runner's worker threads block SIGTERM.
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
}
