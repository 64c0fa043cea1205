import FerryPluginAPI
import Foundation
import FerrySystem

/// What a running `ferry daemon` or `ferry watch` is doing, as `ferry status` (another
/// process) reads it: written to `daemon-status.json` in the state folder about once a
/// second while the process runs. The journal (SQLite in WAL mode, readable while the
/// daemon writes) has the per-file truth; this file has what only the running process
/// knows: runs under way with their progress, schedules, offline remotes.
public struct DaemonSnapshot: Codable, Sendable, Equatable {
    public struct QueueState: Codable, Sendable, Equatable {
        public var queue: String
        public var filesTotal: Int
        public var filesDone: Int
        public var filesFailed: Int
        /// Transfers of this queue in flight right now.
        public var active: Int
        public var bytesTotal: Int64
        public var bytesDone: Int64
        /// Paths being sent now (nil from an older process).
        public var current: [String]? = nil
    }

    public struct FolderState: Codable, Sendable, Equatable {
        public var name: String
        public var mode: String
        public var local: String
        /// `idle`, `running` or `waiting` (for the run lock another process holds).
        public var state: String
        /// Why the current or last run started (`watch`, `rescan`, `poll`, `schedule: …`).
        public var reason: String?
        public var runStartedAt: Date?
        public var lastRunEndedAt: Date?
        public var lastError: String?
        /// Files seen changing that have not settled yet.
        public var unsettledFiles: Int
        /// The current run's progress per queue (empty when idle).
        public var queues: [QueueState]
        public var lastUploaded: Int?
        public var lastDownloaded: Int?
        public var lastFailed: Int?
        /// Paused through the control API (nil from a process that had no API).
        public var paused: Bool?
        /// The remote's location as the journal and the offline list name it.
        public var remote: String?
        /// What the folder's runs wait for (`when:` conditions that do not hold); nil when none.
        public var waitingFor: String? = nil
        /// The run held before its first write (`ChangeHold`), until a run goes through.
        public var hold: HoldState? = nil
    }

    /// A held folder: what the hold saw, and since when it holds.
    public struct HoldState: Codable, Sendable, Equatable {
        /// `deletions`, `replacements` or `encrypted_looking`.
        public var reason: String
        public var message: String
        public var since: Date
    }

    public struct ScheduleState: Codable, Sendable, Equatable {
        public var action: String
        public var trigger: String
        public var next: Date?
        public var lastRun: Date?
    }

    public struct OfflineRemote: Codable, Sendable, Equatable {
        public var remote: String
        public var since: Date
        public var message: String
    }

    public var pid: Int32
    /// `daemon` or `watch`.
    public var command: String
    public var startedAt: Date
    public var updatedAt: Date
    public var folders: [FolderState]
    public var schedules: [ScheduleState]
    public var offlineRemotes: [OfflineRemote]
    /// Reserved for media items (`filesPending`), which the items work derives from the
    /// journal; nil until a provider is set (`DaemonStatusBoard.itemsProvider`).
    public var filesPendingItems: Int?

    public static let fileName = "daemon-status.json"

    public static func path(in stateDirectory: String) -> String {
        LocalFileSystem.join(stateDirectory, fileName)
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    public func encoded() throws -> Data {
        try Self.encoder.encode(self)
    }

    public static func decode(_ data: Data) throws -> DaemonSnapshot {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(DaemonSnapshot.self, from: data)
    }

    /// The snapshot of the process running on this state folder, or nil when none runs (no
    /// file, or its process is gone: a daemon killed with -9 leaves a stale file).
    public static func current(stateDirectory: String) -> DaemonSnapshot? {
        guard let data = FileManager.default.contents(atPath: path(in: stateDirectory)),
              let snapshot = try? decode(data) else { return nil }
        guard CurrentProcess.isRunning(snapshot.pid) else { return nil }
        return snapshot
    }
}
