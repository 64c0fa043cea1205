import Glibc

/// Runs a short command to its end and reads what it prints (a run condition's probe:
/// `nmcli`, a user's `/bin/sh -c` test). Its standard error and input are /dev/null.
public enum ShortCommand {
    public struct Result: Sendable, Equatable {
        /// The exit status (128 + the signal when a signal ended it).
        public var status: Int32
        public var output: String
    }

    /// Runs `arguments` (the program's path first) and returns its status and standard
    /// output; nil when it did not start, or did not end within `timeout` seconds (it is
    /// then killed). Blocks the calling thread.
    public static func run(_ arguments: [String], environment: [String: String]?, timeout: Double) -> Result? {
        // A group of its own: a shell's children are killed with it at the timeout (a
        // `network_command` without `exec` leaves its command a child of the shell).
        guard let process = try? SpawnedProcess.spawn(arguments, environment: environment, standardOutput: .pipe,
                                                      standardError: .null, ownProcessGroup: true),
              let output = process.output else { return nil }
        defer { PipeIO.close(output) }
        let clock = SystemClock()
        func now() -> Double { clock.now() }
        let deadline = now() + timeout
        var printed: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        // Read until the command closes its output (a chatty one never blocks on a full
        // pipe), or until the time is up.
        reading: while true {
            let left = deadline - now()
            guard left > 0 else {
                process.kill()
                _ = SpawnedProcess.waitForExit(process.pid)
                return nil
            }
            switch PipeIO.waitReadable(output, milliseconds: Int32(min(left * 1000, 1000)) + 1) {
            case nil: break reading
            case false?: continue
            case true?:
                switch PipeIO.read(output, into: &buffer) {
                case let .bytes(count): printed += buffer[..<count]
                case .again: continue
                case .end: break reading
                }
            }
        }
        // The output is closed; a command that forked it away may still run: it gets what
        // is left of the time.
        let status: Int32
        switch process.end(within: .milliseconds(Int64(max(0, deadline - now()) * 1000))) {
        case let .exited(code): status = code
        case let .signalled(signal): status = 128 + signal
        case .killedAfterGrace, .unknown: return nil
        }
        return Result(status: status, output: String(decoding: printed, as: UTF8.self))
    }
}
