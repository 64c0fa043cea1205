/// What `DaemonDelegation` does with each event of the daemon's stream while it follows the
/// run it asked for: which run is ours, when it has ended, what a reload or a pause means.
/// Pure, so those rules are table-tested without a daemon; the delegation does the I/O.
struct DelegatedRunFollower {
    enum Step: Equatable {
        case ignore
        /// Ask the daemon for the run now: the stream is open (its first event, the status,
        /// came), or a reload replaced the runtime that had been asked.
        case ask(afterReload: Bool)
        /// The event belongs to our run: show it.
        case show
        /// Our run has ended; `summary` is its summary event, if one came.
        case ended
        case failed(String)
    }

    let folder: String
    private var asked = false
    /// Runs of the folder to let pass before ours (one was under way when we asked).
    private var skipRuns = 0
    private var started = false
    private(set) var summary: [String: Any]?

    init(folder: String) {
        self.folder = folder
    }

    /// The daemon took the run; `whileRunning`: a run of the folder was under way, so ours
    /// is the one after it.
    mutating func askedDaemon(whileRunning: Bool) {
        asked = true
        skipRuns = whileRunning ? 1 : 0
    }

    mutating func handle(_ name: String, _ object: [String: Any]) -> Step {
        // Asked only once the stream is open, so that no event of our run is missed.
        guard asked else { return name == "status" ? .ask(afterReload: false) : .ignore }
        if name == "reload" {
            // The runs under way stopped at a resumable point and the runtime that was asked
            // is gone: ask the new one, if it still has the folder.
            guard object["folders"].map({ ($0 as? [String])?.contains(folder) ?? false }) ?? true else {
                return .failed("the daemon reloaded its config and \(folder) is no longer in it")
            }
            started = false
            summary = nil
            return .ask(afterReload: true)
        }
        guard object["folder"] as? String == folder else { return .ignore }
        switch name {
        case "paused":
            return .failed("\(folder) was paused in the daemon before the run ended; resume it (POST /v1/folders/\(folder)/resume) and run the command again")
        case "run_started":
            if skipRuns == 0 { started = true }
            return .ignore
        case "run_ended":
            // A run cut short by a reload is followed by the `reload` event, or by the end
            // of the stream when the daemon stops: neither is the end of ours.
            if object["stopped"] as? Bool == true { return .ignore }
            if skipRuns > 0 {
                skipRuns -= 1
                return .ignore
            }
            guard started else { return .ignore }
            if let error = object["error"] as? String { return .failed(error) }
            return .ended
        default:
            guard started, skipRuns == 0 else { return .ignore }
            if name == "summary" { summary = object }
            return .show
        }
    }
}
