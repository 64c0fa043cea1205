import Foundation

/// Starts one of the Python servers in `scripts/test-servers/` that print their URL once
/// they listen (the fault proxy, the hostile server), and waits for that URL.
enum ScriptedServer {
    /// Runs `script` with `arguments`, its output and errors in `scratch`; returns the URL it
    /// printed and its pid. `name` says what did not start, in the error.
    static func start(_ script: String, _ arguments: [String], in scratch: TemporaryDirectory,
                      name: String) async throws -> (origin: String, pid: pid_t) {
        let urlFile = scratch.child("url")
        let child = try ChildProcess.spawn(
            ["/usr/bin/env", "python3", TestServer.repositoryRoot + "/scripts/test-servers/" + script] + arguments,
            output: urlFile, error: scratch.child("err"))
        // Polled on a thread of its own, never on the cooperative pool (60 s is a guard).
        let started = await onOwnThread { () -> String? in
            for _ in 0..<6000 {
                if let text = try? String(contentsOfFile: urlFile, encoding: .utf8), text.hasSuffix("\n") {
                    return text.trimmingCharacters(in: .whitespacesAndNewlines)
                }
                usleep(10_000)
            }
            return nil
        }
        if let started { return (started, child) }
        kill(child, SIGKILL)
        _ = ChildProcess.wait(child)
        throw TestServerError(message: "the \(name) did not start: \((try? String(contentsOfFile: scratch.child("err"), encoding: .utf8)) ?? "")")
    }
}
