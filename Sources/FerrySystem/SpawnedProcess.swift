import Glibc
import Synchronization

/// A child process started with `posix_spawn`, not Foundation's `Process`: the child gets
/// an empty signal mask and default signal actions (a test runner's threads block
/// SIGTERM, and a child would inherit that and pass it on), may run in a process group
/// of its own (so killing the group also ends whatever it started), and inherits no
/// descriptor but its three standard streams. One implementation for exec plugins and
/// for the servers tests start.
public final class SpawnedProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A file, created or truncated, mode 0600.
        case file(String)
        /// A pipe whose other end this process keeps (`input`, `output`, `errorOutput`).
        case pipe
    }

    public let pid: Int32
    /// This process's ends of the child's pipes (nil for a stream that is not a pipe).
    /// Close-on-exec; whoever takes one closes it.
    public let input: Int32?
    public let output: Int32?
    public let errorOutput: Int32?

    private init(pid: Int32, input: Int32?, output: Int32?, errorOutput: Int32?) {
        self.pid = pid
        self.input = input
        self.output = output
        self.errorOutput = errorOutput
    }

    /// pipe2(O_CLOEXEC) is not visible from Swift on glibc: pipes are made, then marked,
    /// with every spawn under this lock so that no other child starts in between and
    /// inherits an end.
    private static let spawnLock = Mutex<Void>(())

    /// Starts `arguments[0]` with `arguments`. `environment` nil passes this process's.
    /// Throws with the `errno` of the failure (`SystemError.isNotExecutable` for a
    /// program that cannot run at all).
    public static func spawn(_ arguments: [String], environment: [String: String]? = nil, standardInput: Stream = .null,
                             standardOutput: Stream, standardError: Stream,
                             ownProcessGroup: Bool = false) throws(SystemError) -> SpawnedProcess {
        guard let executable = arguments.first else { throw SystemError(ENOENT, "cannot start a process", path: "") }
        let result: Result<SpawnedProcess, SystemError> = spawnLock.withLock { _ in
            var kept: [Int32] = []
            var childEnds: [Int32] = []
            func pipeEnds() -> (read: Int32, write: Int32)? {
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else { return nil }
                for descriptor in ends { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
                return (ends[0], ends[1])
            }
            func closeAll(_ descriptors: [Int32]) { for descriptor in descriptors { close(descriptor) } }

            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            var ends: [Int32?] = [nil, nil, nil]
            for (number, stream) in [standardInput, standardOutput, standardError].enumerated() {
                let target = Int32(number)
                switch stream {
                case .null:
                    posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
                case let .file(path):
                    posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
                case .pipe:
                    guard let pair = pipeEnds() else {
                        let error = SystemError(errno, "cannot create a pipe for", path: executable)
                        closeAll(kept + childEnds)
                        return .failure(error)
                    }
                    let (ours, theirs) = target == 0 ? (pair.write, pair.read) : (pair.read, pair.write)
                    kept.append(ours)
                    childEnds.append(theirs)
                    ends[number] = ours
                    // dup2 clears close-on-exec on the copy the child keeps.
                    posix_spawn_file_actions_adddup2(&actions, theirs, target)
                }
            }
            SpawnActions.closeInheritedDescriptors(&actions)

            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var noneBlocked = sigset_t()
            sigemptyset(&noneBlocked)
            posix_spawnattr_setsigmask(&attributes, &noneBlocked)
            var defaults = sigset_t()
            sigemptyset(&defaults)
            for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
            if ownProcessGroup {
                posix_spawnattr_setpgroup(&attributes, 0)
                flags |= POSIX_SPAWN_SETPGROUP
            }
            posix_spawnattr_setflags(&attributes, Int16(flags))

            var cArguments: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            defer { for pointer in cArguments { free(pointer) } }
            var pid: pid_t = 0
            let status: Int32
            if let environment {
                var cEnvironment: [UnsafeMutablePointer<CChar>?] = environment.sorted { $0.key < $1.key }
                    .map { strdup($0.key + "=" + $0.value) } + [nil]
                defer { for pointer in cEnvironment { free(pointer) } }
                status = posix_spawn(&pid, executable, &actions, &attributes, &cArguments, &cEnvironment)
            } else {
                status = posix_spawn(&pid, executable, &actions, &attributes, &cArguments, environ)
            }
            closeAll(childEnds)
            guard status == 0 else {
                closeAll(kept)
                return .failure(SystemError(status, "cannot start", path: executable))
            }
            return .success(SpawnedProcess(pid: pid, input: ends[0], output: ends[1], errorOutput: ends[2]))
        }
        return try result.get()
    }

    /// Kills the child with SIGKILL, and its process group when it has one of its own.
    public func kill() {
        Glibc.kill(-pid, SIGKILL)
        Glibc.kill(pid, SIGKILL)
    }

    /// Sends SIGTERM to the child (only the child).
    public func terminate() {
        Glibc.kill(pid, SIGTERM)
    }

    /// How a child ended.
    public enum Ending: Sendable, Equatable {
        case exited(status: Int32)
        case signalled(Int32)
        /// It had not ended within the grace period and was killed.
        case killedAfterGrace
        /// It was reaped elsewhere (waitpid failed).
        case unknown
    }

    /// Waits up to `grace` for the child to exit by itself, then kills it. Blocks the
    /// calling thread.
    public func end(within grace: Duration) -> Ending {
        let clock = ContinuousClock()
        let deadline = clock.now + grace
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { break }
            if result < 0 {
                if errno == EINTR { continue }
                return .unknown
            }
            if clock.now >= deadline {
                kill()
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return .killedAfterGrace
            }
            usleep(5_000)
        }
        return (status & 0x7f) == 0 ? .exited(status: (status >> 8) & 0xff) : .signalled(status & 0x7f)
    }

    /// How the child ended, in words, once it has (`end(within:)`).
    public func reap(grace: Duration) -> String {
        switch end(within: grace) {
        case let .exited(status): "exited with status \(status)"
        case let .signalled(signal):
            "was killed by signal \(signal)" + (signal == SIGKILL ? " (SIGKILL)" : signal == SIGSEGV ? " (SIGSEGV)" : "")
        case .killedAfterGrace: "was killed (it did not exit)"
        case .unknown: "ended"
        }
    }

    /// Waits for the child `pid` and returns its exit status (128 + the signal when a
    /// signal ended it). Blocks the calling thread.
    public static func waitForExit(_ pid: Int32) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}
