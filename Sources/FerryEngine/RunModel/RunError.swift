import FerryJournal
import FerryPlanning
import FerryPluginAPI

/// A run that could not start or had to stop as a whole (as opposed to single files
/// failing): which phase stopped it, the one-line message for a person, and the error that
/// caused it, kept with its class (a backend's error says whether the remote was only
/// unreachable, which a long-running process waits out).
public struct RunError: Error, Sendable, CustomStringConvertible {
    /// Where the run stopped, in the order a run goes through them.
    public enum Phase: String, Sendable {
        /// Rules and patterns from the configuration.
        case setup
        /// Opening, checking or writing the journal.
        case journal
        /// Another process runs this folder pair.
        case lock
        /// Creating or scanning the local folder.
        case localScan
        /// Listing the remote.
        case remoteListing
        /// Planning refused the plan.
        case plan
        /// The plan was held before its first write: it would delete or replace too much, or
        /// changed files look encrypted (`ChangeHold`); `--accept-changes` lets it go on.
        case hold
        /// Running the jobs and the bundles.
        case execute
        /// Anything else (watching, verifying, a bundle manifest).
        case other
    }

    /// The error underneath, with its class.
    public enum Cause: Sendable {
        case backend(BackendError)
        case journal(JournalError)
        /// The run was stopped while it waited (for another run's lock).
        case stopped
        /// The plan was held (`Phase.hold`).
        case hold(ChangeHold)
    }

    public var phase: Phase
    public var message: String
    public var cause: Cause?

    public init(_ phase: Phase, _ message: String, cause: Cause? = nil) {
        self.phase = phase
        self.message = message
        self.cause = cause
    }

    /// A run error with nothing more to say than its message.
    public init(_ message: String) {
        self.init(.other, message)
    }

    /// The remote did not answer (as opposed to refusing): a long-running process marks it
    /// offline and tries again.
    public var remoteUnreachable: Bool {
        if case let .backend(error) = cause { return error.suggestsOutage }
        return false
    }

    /// The remote refused the configured credentials or address: fixing config.yml is the
    /// way out (the command line exits 2), not running again.
    public var isConfiguration: Bool {
        if case let .backend(error) = cause {
            return error.code == .authenticationFailed || error.code == .invalidName
        }
        return false
    }

    /// The run was stopped (Ctrl-C, a daemon stopping) and this is how the stop reached the
    /// step it was in: the stop, not a failure to report.
    public var isStop: Bool {
        switch cause {
        case let .journal(error): return error.stopped
        case let .backend(error): return error.code == .cancelled
        case .stopped: return true
        case .hold, nil: return false
        }
    }

    /// The plan that was held, when the run stopped for that.
    public var hold: ChangeHold? {
        if case let .hold(hold) = cause { return hold }
        return nil
    }

    public var description: String { message }
}
