/// Tells a backend outage from a failure of one file, and decides what happens to the jobs
/// an outage interrupts.
///
/// A failure that may mean the backend is gone (`BackendError.suggestsOutage`) parks its job
/// and asks for a probe; no new job starts until the probe answers. If the backend answers,
/// it was the file's failure after all: the parked jobs go back to the usual retry rules. If
/// it does not, the backend is `offline`: parked jobs wait without using up their attempts,
/// probes repeat with backoff, and when one succeeds every parked job starts again. After
/// `giveUpAfter` seconds offline the run stops waiting and hands the parked jobs back.
///
/// Pure logic over values: time comes in as seconds on a monotonic clock, so tests drive
/// outages of minutes in microseconds.
public struct OutageTracker<Parked: Sendable>: Sendable {
    public enum State: Sendable, Equatable {
        /// Jobs run.
        case online
        /// A suspicious failure came in; a probe is out and nothing new starts.
        case checking
        /// The backend did not answer a probe at `since`; `probes` have failed in a row.
        case offline(since: Double, probes: Int)
    }

    /// What the engine must do after a probe answered.
    public enum ProbeOutcome: Sendable {
        /// The backend answered right after a suspicious failure: treat the parked jobs as
        /// ordinary failures (their attempts count).
        case falseAlarm([Parked])
        /// The backend stopped answering: probe again at `nextProbeAt`.
        case wentOffline(nextProbeAt: Double)
        /// Still no answer: probe again at `nextProbeAt`.
        case stillOffline(nextProbeAt: Double)
        /// The backend is back after `offlineSeconds`: start the parked jobs again, without
        /// counting the outage against them.
        case backOnline([Parked], offlineSeconds: Double)
        /// Offline for longer than allowed: the run hands back the parked jobs and the waiting ones.
        case gaveUp([Parked], offlineSeconds: Double)
    }

    public private(set) var state: State = .online
    private var parked: [Parked] = []
    /// Seconds from a failed probe to the next one, given how many failed in a row.
    private let probeDelay: @Sendable (Int) -> Double
    private let giveUpAfter: Double?

    /// `giveUpAfter` nil waits for the backend forever (the daemon); a push or pull by hand
    /// gives up after a while so that a person hears about it.
    public init(probeDelay: @escaping @Sendable (Int) -> Double, giveUpAfter: Double?) {
        self.probeDelay = probeDelay
        self.giveUpAfter = giveUpAfter
    }

    /// New jobs may start.
    public var isDispatching: Bool { state == .online }

    /// Nothing parked and no probe pending: the tracker holds up nothing.
    public var isSettled: Bool { state == .online && parked.isEmpty }

    public var parkedCount: Int { parked.count }

    /// A job failed in a way that suggests an outage. Returns true when the engine must send
    /// a probe now (the first such failure); later ones just wait with it.
    public mutating func jobFailedSuspiciously(_ job: Parked) -> Bool {
        parked.append(job)
        if state == .online {
            state = .checking
            return true
        }
        return false
    }

    /// A probe answered (`reachable`) or not, at `now`.
    public mutating func probeAnswered(reachable: Bool, now: Double) -> ProbeOutcome {
        switch (state, reachable) {
        case (.online, _):
            // A probe nobody waits for (cannot happen with one probe out at a time).
            return .falseAlarm(takeParked())
        case (.checking, true):
            state = .online
            return .falseAlarm(takeParked())
        case (.checking, false):
            state = .offline(since: now, probes: 1)
            return .wentOffline(nextProbeAt: now + probeDelay(1))
        case let (.offline(since, _), true):
            state = .online
            return .backOnline(takeParked(), offlineSeconds: now - since)
        case let (.offline(since, probes), false):
            if let giveUpAfter, now - since >= giveUpAfter {
                state = .online
                return .gaveUp(takeParked(), offlineSeconds: now - since)
            }
            state = .offline(since: since, probes: probes + 1)
            return .stillOffline(nextProbeAt: now + probeDelay(probes + 1))
        }
    }

    private mutating func takeParked() -> [Parked] {
        defer { parked.removeAll() }
        return parked
    }
}
