import Glibc

/// This process: its id, and the signal it sends itself for a reload (the same path a
/// SIGHUP from `systemctl reload` takes).
public enum CurrentProcess {
    public static var id: Int32 { getpid() }

    public static func askToReload() {
        kill(getpid(), SIGHUP)
    }

    /// Whether a process with id `pid` exists (one of another user counts: signalling it
    /// is refused, not unknown).
    public static func isRunning(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }
}
