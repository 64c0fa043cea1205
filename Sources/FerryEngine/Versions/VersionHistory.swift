import FerryConfig

/// The versions of one file on an append-only remote: the saved ones in the versions
/// folder and the current one under the file's own name, each with the span it was current.
///
/// A saved name carries the moment its version was replaced (`VersionName`), which is the
/// moment the next version became current. The first version's start is its modification
/// time as the remote lists it, kept below its replacement. Pure: built from listings.
public struct VersionHistory: Sendable, Equatable {
    public struct Version: Sendable, Equatable {
        /// Milliseconds since 1970 from which this version was current.
        public var fromMillis: Int64
        /// Until when it was current; nil for the current version.
        public var untilMillis: Int64?
        public var size: Int64
        /// Where it is, relative to the remote's root: a saved name, or the file's own.
        public var savedPath: String?

        public var isCurrent: Bool { untilMillis == nil }
    }

    /// Oldest first.
    public var versions: [Version]

    /// A saved version as listed: its replacement time (from its name), its size and the
    /// modification time the remote lists for it.
    public struct Saved: Sendable {
        public var replacedAtMillis: Int64
        public var size: Int64
        public var modifiedMillis: Int64?
        public var path: String

        public init(replacedAtMillis: Int64, size: Int64, modifiedMillis: Int64?, path: String) {
            self.replacedAtMillis = replacedAtMillis
            self.size = size
            self.modifiedMillis = modifiedMillis
            self.path = path
        }
    }

    /// `current`: the file under its own name (size, modification time), nil when the
    /// remote holds none.
    public init(saved: [Saved], current: (size: Int64, modifiedMillis: Int64?)?) {
        let ordered = saved.sorted { $0.replacedAtMillis < $1.replacedAtMillis }
        var versions: [Version] = []
        var previousEnd: Int64?
        for entry in ordered {
            let from = previousEnd ?? Self.firstStart(modified: entry.modifiedMillis, until: entry.replacedAtMillis)
            versions.append(Version(fromMillis: from, untilMillis: entry.replacedAtMillis, size: entry.size, savedPath: entry.path))
            previousEnd = entry.replacedAtMillis
        }
        if let current {
            let from = previousEnd ?? current.modifiedMillis ?? Int64.min
            versions.append(Version(fromMillis: from, untilMillis: nil, size: current.size, savedPath: nil))
        }
        self.versions = versions
    }

    /// The first version's start: its modification time, but before its replacement (a
    /// remote that stamps a copy with the moment of copying lists a later time).
    static func firstStart(modified: Int64?, until: Int64) -> Int64 {
        guard let modified, modified < until else { return until - 1 }
        return modified
    }

    /// The version that was current at `millis`; nil when the file did not exist yet.
    public func version(at millis: Int64) -> Version? {
        versions.last { $0.fromMillis <= millis && ($0.untilMillis.map { millis < $0 } ?? true) }
    }
}

/// Which saved versions retention removes (`keep_versions`, `keep_days`), in a folder that
/// may delete. Pure: the saved versions and the time are passed in.
public enum VersionPruning {
    /// The saved versions (oldest first or in any order) past `keep_versions` newest or
    /// replaced more than `keep_days` before `nowMillis`.
    public static func expired(_ saved: [VersionHistory.Saved], retention: VersionRetention, nowMillis: Int64) -> [VersionHistory.Saved] {
        let newestFirst = saved.sorted { $0.replacedAtMillis > $1.replacedAtMillis }
        return newestFirst.enumerated().filter { index, entry in
            if let keep = retention.keepVersions, index >= keep { return true }
            if let days = retention.keepDays, nowMillis - entry.replacedAtMillis > Int64(days) * 86_400_000 { return true }
            return false
        }.map(\.element)
    }
}
