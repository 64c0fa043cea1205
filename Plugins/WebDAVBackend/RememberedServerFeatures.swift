import Foundation

/// A probe's findings kept between runs in the state folder (`BackendMemory`), with what
/// the server said it runs (its `Server` header) and when the probe ran.
///
/// The probe costs about a dozen requests, three files written into the user's folder
/// (which other clients of the server see come and go) and a 50 ms pause, in every run
/// that uploads. What it learns is the server software's behaviour, which changes when the
/// software does: so the findings stand for a day, and only while this run's first answer
/// names the same software. An upgrade announces itself; a server that hides its name
/// (no `Server` header) is probed every run. What is left is a server swapped behind a
/// proxy that keeps its name: for at most a day the old findings hold there.
struct RememberedServerFeatures: Codable, Equatable {
    static let currentVersion = 1
    /// How long findings stand without a new probe.
    static let standsFor: Double = 24 * 3600
    /// A probe time this far ahead of now means the clock was set back: not trusted.
    static let clockSlack: Double = 300

    var version: Int = Self.currentVersion
    /// The `Server` header when the probe ran.
    var server: String
    /// Wall-clock seconds since 1970 when the probe ran.
    var probedAt: Double
    var features: WebDAVServerFeatures

    init(server: String, probedAt: Double, features: WebDAVServerFeatures) {
        self.server = server
        self.probedAt = probedAt
        self.features = features
    }

    func encoded() -> Data? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try? encoder.encode(self)
    }

    /// When these findings stop standing.
    var until: Double { probedAt + Self.standsFor }

    /// The remembered record to use instead of a probe, or nil: nothing remembered, a
    /// record that does not decode or is of another version, a server that now gives
    /// another name (or none), or findings older than `standsFor` (or from the future).
    static func trusted(_ data: Data?, server: String?, now: Double) -> RememberedServerFeatures? {
        guard let data, let server, !server.isEmpty,
              let record = try? JSONDecoder().decode(RememberedServerFeatures.self, from: data),
              record.version == currentVersion, record.server == server,
              record.probedAt <= now + clockSlack, now < record.until else { return nil }
        return record
    }
}
