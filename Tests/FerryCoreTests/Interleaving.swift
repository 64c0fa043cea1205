import FerryPluginAPI
import Synchronization

/// The order in which several devices' backend calls reach one shared remote, chosen from
/// a seed: every call of every device waits at one gate, and once every device that is
/// running has a call waiting there (or has finished its run), exactly one waiting call is
/// let through, chosen at random. Nothing else of the devices' runs can happen meanwhile:
/// the chosen device runs alone until it reaches its next call or ends its run, and then
/// the next choice is made.
///
/// The choice depends on nothing but the seed and on which calls are waiting, and which
/// calls are waiting depends on nothing but the answers the devices had, provided that a
/// device makes one backend call at a time. A device's run does (its listing, its jobs with
/// `transfers` 1, its probes only while its jobs wait). A second call while one waits would
/// make the choice depend on timing: it is recorded (`overlaps`) and fails the seed.
///
/// The gate may also let a call through with a fault: it fails before reaching the remote
/// (a 503, or no connection at all), it is carried out and its answer lost, or the device
/// crashes there: its run is cancelled, the call (done or not) fails, and every later call
/// of that run fails at once, as after a kill; its journal stays as the run left it. Every
/// choice is written to the trace, which is the same for the same seed.
final class Interleaving: Sendable {
    /// How a call the gate lets through ends.
    enum Fate: Sendable, Equatable {
        case proceed
        /// Fails before reaching the remote with this error.
        case failBefore(BackendError.Code)
        /// Reaches the remote, then the connection drops before the answer.
        case loseAnswer
        /// The device crashes at this call, with the call carried out or not.
        case crash(afterEffect: Bool)
        /// The device crashed earlier in this run: nothing reaches the remote any more.
        case down

        var note: String {
            switch self {
            case .proceed, .down: ""
            case let .failBefore(code): "  ! fails before: \(code)"
            case .loseAnswer: "  ! done, answer lost"
            case let .crash(afterEffect): afterEffect ? "  ! done, then the device crashes" : "  ! the device crashes"
            }
        }
    }

    /// Chances out of 1,000 of each fault, for each call let through.
    struct FaultRates: Sendable {
        var failBefore = 0
        var loseAnswer = 0
        var crash = 0

        static let none = FaultRates()
    }

    private struct Waiting {
        var call: String
        var resume: CheckedContinuation<Fate, Never>
    }

    private struct State {
        var random: SplitMix
        var faults = FaultRates.none
        var running: Set<Int> = []
        var armed = false
        var waiting: [Int: Waiting] = [:]
        var crashed: Set<Int> = []
        var stoppers: [Int: @Sendable () -> Void] = [:]
        var trace: [String] = []
        var overlaps: [String] = []
        var crashes: [Crash] = []
    }

    /// A device that crashed at a call.
    struct Crash: Sendable, Equatable {
        var device: String
        var call: String
        var afterEffect: Bool
    }

    private let state: Mutex<State>
    private let names: [String]

    /// `names`: the devices' names for the trace, by index.
    init(seed: UInt64, names: [String]) {
        state = Mutex(State(random: SplitMix(seed: seed)))
        self.names = names
    }

    var trace: [String] { state.withLock { $0.trace } }

    var crashes: [Crash] { state.withLock { $0.crashes } }

    /// Calls a device made while another of its calls waited: each one a moment at which
    /// the interleaving could not be sure to be the seed's.
    var overlaps: [String] { state.withLock { $0.overlaps } }

    func note(_ line: String) {
        state.withLock { $0.trace.append(line) }
    }

    func setFaults(_ faults: FaultRates) {
        state.withLock { $0.faults = faults }
    }

    /// These devices are about to run: no call is let through until `arm()`, so that every
    /// one of them counts before the first choice is made.
    func prepare(_ devices: [Int]) {
        state.withLock { state in
            state.running = Set(devices)
            state.armed = false
        }
    }

    /// How a device's run is cancelled when it crashes.
    func onCrash(of device: Int, _ stop: @escaping @Sendable () -> Void) {
        state.withLock { $0.stoppers[device] = stop }
    }

    func arm() {
        let chosen = state.withLock { state -> Chosen? in
            state.armed = true
            return Self.choose(&state, names: names)
        }
        chosen?.carryOut()
    }

    /// A device's run ended (or threw): it no longer counts as running.
    func finished(_ device: Int) {
        let chosen = state.withLock { state -> Chosen? in
            state.running.remove(device)
            state.crashed.remove(device)
            state.stoppers[device] = nil
            return Self.choose(&state, names: names)
        }
        chosen?.carryOut()
    }

    /// Waits until the call is chosen; returns how it is to end.
    func pass(_ call: String, device: Int) async -> Fate {
        await withCheckedContinuation { (continuation: CheckedContinuation<Fate, Never>) in
            let chosen = state.withLock { state -> Chosen? in
                if state.crashed.contains(device) {
                    state.trace.append("\(names[device]) \(call)  (down)")
                    return Chosen(resume: continuation, fate: .down, stop: nil)
                }
                if let other = state.waiting[device] {
                    state.overlaps.append("\(names[device]) called \(call) while \(other.call) waited")
                    // Let the earlier one through, so that the run can go on; the seed fails.
                    state.waiting[device] = nil
                    state.trace.append("\(names[device]) \(other.call)  (overlap)")
                    other.resume.resume(returning: .proceed)
                }
                state.waiting[device] = Waiting(call: call, resume: continuation)
                return Self.choose(&state, names: names)
            }
            chosen?.carryOut()
        }
    }

    /// A call let through, resumed outside the lock, after its device's run was cancelled
    /// when it crashes.
    private struct Chosen {
        var resume: CheckedContinuation<Fate, Never>
        var fate: Fate
        var stop: (@Sendable () -> Void)?

        func carryOut() {
            stop?()
            resume.resume(returning: fate)
        }
    }

    /// Once every running device waits: one waiting call, at random, and its fate.
    private static func choose(_ state: inout State, names: [String]) -> Chosen? {
        guard state.armed, !state.waiting.isEmpty, state.running.allSatisfy({ state.waiting[$0] != nil }) else { return nil }
        let candidates = state.waiting.keys.sorted()
        let device = candidates[state.random.below(candidates.count)]
        let waiting = state.waiting.removeValue(forKey: device)!
        let fate = drawFate(&state)
        state.trace.append("\(names[device]) \(waiting.call)\(fate.note)")
        var stop: (@Sendable () -> Void)?
        if case let .crash(afterEffect) = fate {
            state.crashed.insert(device)
            state.crashes.append(Crash(device: names[device], call: waiting.call, afterEffect: afterEffect))
            stop = state.stoppers[device]
        }
        return Chosen(resume: waiting.resume, fate: fate, stop: stop)
    }

    private static func drawFate(_ state: inout State) -> Fate {
        let faults = state.faults
        guard faults.failBefore + faults.loseAnswer + faults.crash > 0 else { return .proceed }
        var roll = state.random.below(1000)
        if roll < faults.failBefore {
            return .failBefore(state.random.below(2) == 0 ? .serverError : .unreachable)
        }
        roll -= faults.failBefore
        if roll < faults.loseAnswer { return .loseAnswer }
        roll -= faults.loseAnswer
        if roll < faults.crash { return .crash(afterEffect: state.random.below(2) == 0) }
        return .proceed
    }
}
