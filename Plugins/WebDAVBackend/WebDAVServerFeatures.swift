import FerryPluginAPI
import FerrySystem
import Synchronization

/// What one WebDAV server turned out to support, learnt by `WebDAVBackend.probeServer()`.
///
/// Kept in memory for the backend's lifetime, and in the state folder for a day while the
/// server gives the same name (`RememberedServerFeatures`): a server can be upgraded or
/// reconfigured between runs.
public struct WebDAVServerFeatures: Sendable, Equatable, Codable, CustomStringConvertible {
    public enum Support: Sendable, Equatable, Codable, CustomStringConvertible {
        case supported
        /// With what the probe saw, e.g. `HTTP 501 on a ranged PUT`.
        case unsupported(String)

        public var isSupported: Bool { self == .supported }

        public var description: String {
            switch self {
            case .supported: return "yes"
            case let .unsupported(reason): return "no (\(reason))"
            }
        }

        /// One string: "yes", or "no: REASON".
        public init(from decoder: any Decoder) throws {
            let text = try decoder.singleValueContainer().decode(String.self)
            if text == "yes" {
                self = .supported
            } else if text.hasPrefix("no: ") {
                self = .unsupported(String(text.dropFirst(4)))
            } else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "neither yes nor no: …"))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .supported: try container.encode("yes")
            case let .unsupported(reason): try container.encode("no: " + reason)
            }
        }
    }

    /// `PUT` with `Content-Range` writes at the offset and keeps what is there: the probe
    /// appended to a file and read back exactly the bytes sent.
    public var rangedPut: Support
    /// `PROPPATCH` stores Ferry's `mtime` property and `PROPFIND` returns it.
    public var modificationTimeProperty: Support
    /// The server sets the file's own modification time from `X-OC-Mtime` (ownCloud,
    /// Nextcloud), so no property is needed.
    public var honoursOCMtime: Bool
    /// The server leaves names that start with `.` out of its listings (nginx's dav-ext):
    /// the probe file, which has such a name, was stored but not listed.
    public var hidesDotNames: Bool = false
    /// A `PUT` cut off half-way left the file's previous content whole under its name: the
    /// server stores a body elsewhere and renames it into place once complete (nginx's
    /// client_body_temp, Apache's `.davfs.tmp*`). There a `PUT` straight to the final name
    /// is as safe as one to a temporary name and a `MOVE`, and takes one round trip instead
    /// of two.
    public var atomicPut: Support = .unsupported("not probed")
    /// A `PUT` with `If-None-Match: *` onto a taken name is refused (412) and leaves the
    /// file as it was (Apache); nginx ignores the condition and writes. Where it is
    /// honoured, a small file for a name the listing showed free can go in one `PUT`.
    public var newNameCondition: Support = .unsupported("not probed")

    public var description: String {
        "ranged PUT: \(rangedPut); mtime property: \(modificationTimeProperty); X-OC-Mtime: \(honoursOCMtime ? "yes" : "no")"
            + "; lists names starting with '.': \(hidesDotNames ? "no" : "yes"); atomic PUT: \(atomicPut)"
            + "; PUT if the name is free: \(newNameCondition)"
    }
}

/// The features of one server once known, and the probe that finds them, run at most once
/// at a time: concurrent uploads that need the answer wait for the same probe. What is
/// known stands until its `until` (wall-clock seconds: a day after the probe,
/// `RememberedServerFeatures.standsFor`), so a daemon that runs for weeks probes again
/// daily, as a run from the state folder does.
final class ServerFeatureRecord: Sendable {
    /// Features and when they stop standing.
    struct Found: Sendable {
        var features: WebDAVServerFeatures
        var until: Double
    }

    private struct State {
        var known: Found?
        var running: Task<Result<Found, BackendError>, Never>?
    }

    private enum Next {
        case known(WebDAVServerFeatures)
        case wait(Task<Result<Found, BackendError>, Never>)
    }

    private let state = Mutex(State())
    private let wallTime: @Sendable () -> Double

    init(wallTime: @escaping @Sendable () -> Double = { SystemClock().wallTime() }) {
        self.wallTime = wallTime
    }

    /// What is known and still stands, without asking the server.
    var current: WebDAVServerFeatures? {
        let now = wallTime()
        return state.withLock { state in state.known.flatMap { now < $0.until ? $0.features : nil } }
    }

    /// The features, probing with `probe` if nobody has yet or what was found no longer
    /// stands. A failed probe (the server unreachable, the credentials refused) is not
    /// kept: the next caller tries again.
    func features(
        probe: @escaping @Sendable () async -> Result<Found, BackendError>
    ) async throws(BackendError) -> WebDAVServerFeatures {
        let now = wallTime()
        // One look under the lock: known and standing, or the probe to wait for (started
        // here if none runs), so no caller starts a second probe beside a finished one.
        let next = state.withLock { state -> Next in
            if let known = state.known, now < known.until { return .known(known.features) }
            if let running = state.running { return .wait(running) }
            let started = Task { await probe() }
            state.running = started
            return .wait(started)
        }
        let task: Task<Result<Found, BackendError>, Never>
        switch next {
        case let .known(features): return features
        case let .wait(running): task = running
        }
        let outcome = await task.value
        state.withLock { state in
            guard state.running == task else { return }
            state.running = nil
            if case let .success(found) = outcome { state.known = found }
        }
        return try outcome.get().features
    }
}
