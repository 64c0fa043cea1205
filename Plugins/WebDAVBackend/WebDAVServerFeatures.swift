import FerryPluginAPI
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
/// at a time: concurrent uploads that need the answer wait for the same probe.
final class ServerFeatureRecord: Sendable {
    private let known = Mutex<WebDAVServerFeatures?>(nil)
    private let running = Mutex<Task<Result<WebDAVServerFeatures, BackendError>, Never>?>(nil)

    /// What is known so far, without asking the server.
    var current: WebDAVServerFeatures? { known.withLock { $0 } }

    /// The features, probing with `probe` if nobody has yet. A failed probe (the server
    /// unreachable, the credentials refused) is not remembered: the next caller tries again.
    func features(
        probe: @escaping @Sendable () async -> Result<WebDAVServerFeatures, BackendError>
    ) async throws(BackendError) -> WebDAVServerFeatures {
        if let features = current { return features }
        let task = running.withLock { running in
            if let task = running { return task }
            let task = Task { await probe() }
            running = task
            return task
        }
        let outcome = await task.value
        switch outcome {
        case let .success(features):
            known.withLock { $0 = features }
            return features
        case let .failure(error):
            running.withLock { if $0 == task { $0 = nil } }
            throw error
        }
    }
}
