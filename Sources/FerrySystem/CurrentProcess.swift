import Glibc

/// This process: its id, and the signal it sends itself for a reload (the same path a
/// SIGHUP from `systemctl reload` takes).
public enum CurrentProcess {
    public static var id: Int32 { getpid() }

    public static func askToReload() {
        kill(getpid(), SIGHUP)
    }
}
