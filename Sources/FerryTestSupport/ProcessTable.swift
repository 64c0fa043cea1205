import Foundation

/// What `/proc` says about processes a test started indirectly (a program run by the shell
/// in a tmux pane), read from `/proc/PID/stat`.
enum ProcessTable {
    /// The processes whose parent is `parent`.
    static func children(of parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { fields(of: $0)?.parent == parent }
    }

    /// Stopped by a signal (state T), or gone.
    static func isStopped(_ pid: Int32) -> Bool {
        guard let state = fields(of: pid)?.state else { return true }
        return state == "T"
    }

    /// State and parent from `/proc/PID/stat`. The command name in parentheses may itself
    /// hold spaces and parentheses, so the fields are read after the last ")".
    private static func fields(of pid: Int32) -> (state: Character, parent: Int32)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let rest = stat[stat.index(after: close)...].split(separator: " ")
        guard rest.count >= 2, let state = rest[0].first, let parent = Int32(rest[1]) else { return nil }
        return (state, parent)
    }
}
