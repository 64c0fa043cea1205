import FerryPluginAPI
import FerrySystem
import Foundation

/// A running plugin executable with its three standard streams on pipes.
///
/// Started with `posix_spawn`, not Foundation's `Process`: the child gets an empty signal
/// mask and default signal actions (a test runner's threads block SIGTERM, and a child
/// would inherit that), runs in its own process group (so `terminate` also ends anything it
/// started), and inherits no descriptor but its three pipes (every end Ferry keeps is
/// close-on-exec, so a second plugin never holds the first one's stdin open). This file is
/// the C edge of the exec backend: the only place it touches raw descriptors and pointers.
final class PluginProcess: Sendable {
    private static let spawnLock = NSLock()

    let pid: pid_t
    /// Ferry's ends of the plugin's stdin, stdout and stderr.
    let input: Int32
    let output: Int32
    let errorOutput: Int32

    private init(pid: pid_t, input: Int32, output: Int32, errorOutput: Int32) {
        self.pid = pid
        self.input = input
        self.output = output
        self.errorOutput = errorOutput
    }

    static func spawn(_ executable: String, environment: [String: String]) throws(BackendError) -> PluginProcess {
        // A plugin runs as you: one that another user can change is theirs to run.
        if let reason = FileTrust.distrust(path: executable, environment: ProcessInfo.processInfo.environment) {
            throw BackendError(.permissionDenied, "refusing to run plugin \(executable): \(reason); run chmod go-w on it and its "
                + "folder, or set \(FileTrust.overrideVariable)=1 to run it anyway", retryable: false)
        }
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        var stderrPipe: [Int32] = [-1, -1]
        func closeAll() {
            for fd in stdinPipe + stdoutPipe + stderrPipe where fd >= 0 { close(fd) }
        }
        // pipe2(O_CLOEXEC) is not visible from Swift on glibc: pipe, then set the flag,
        // with every spawn of this type under one lock so no other plugin starts in between
        // and inherits an end.
        spawnLock.lock()
        defer { spawnLock.unlock() }
        func makePipe(_ ends: inout [Int32]) -> Bool {
            guard pipe(&ends) == 0 else { return false }
            for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return true
        }
        guard makePipe(&stdinPipe), makePipe(&stdoutPipe), makePipe(&stderrPipe) else {
            let code = errno
            closeAll()
            throw BackendError(.io, "cannot create pipes for plugin \(executable)", cause: String(cString: strerror(code)))
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copies the child keeps.
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
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
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = [executable]
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        // Only what the plugin's remote needs, never Ferry's whole environment.
        var cEnvironment: [UnsafeMutablePointer<CChar>?] = environment.sorted { $0.key < $1.key }
            .map { strdup($0.key + "=" + $0.value) } + [nil]
        defer { for pointer in cEnvironment { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, &cArguments, &cEnvironment)
        close(stdinPipe[0])
        close(stdoutPipe[1])
        close(stderrPipe[1])
        guard status == 0 else {
            close(stdinPipe[1])
            close(stdoutPipe[0])
            close(stderrPipe[0])
            throw BackendError(.unreachable, "cannot start plugin \(executable)", cause: String(cString: strerror(status)),
                               retryable: status != ENOENT && status != EACCES && status != ENOEXEC)
        }
        return PluginProcess(pid: pid, input: stdinPipe[1], output: stdoutPipe[0],
                             errorOutput: stderrPipe[0])
    }

    /// Kills the plugin and everything in its process group at once.
    func terminate() {
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
    }

    /// How the process ended, once it has: waits up to `grace` for it to exit by itself,
    /// then kills it. Blocks the calling thread (run it through `BlockingIO`).
    func reap(grace: Duration) -> String {
        let clock = ContinuousClock()
        let deadline = clock.now + grace
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { break }
            if result < 0 {
                if errno == EINTR { continue }
                return "ended"
            }
            if clock.now >= deadline {
                terminate()
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                // Still the group: a child the plugin started may hold on to nothing now.
                return "was killed (it did not exit)"
            }
            usleep(5_000)
        }
        if (status & 0x7f) == 0 { return "exited with status \((status >> 8) & 0xff)" }
        let signal = status & 0x7f
        return "was killed by signal \(signal)" + (signal == SIGKILL ? " (SIGKILL)" : signal == SIGSEGV ? " (SIGSEGV)" : "")
    }
}
