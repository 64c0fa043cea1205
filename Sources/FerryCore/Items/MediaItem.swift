import FerryConfig
import FerryPlanning

/// The files that make up one media item, and the item's status derived from theirs.
/// Never stored: the journal holds file statuses only, so the two cannot disagree.
public struct MediaItem: Sendable, Equatable {
    /// Folder and stem, e.g. `DCIM/IMG_0001`.
    public var key: String
    public var files: [FileState]

    public struct FileState: Sendable, Equatable {
        public var path: String
        public var status: FileStatus
        public var bytes: Int64

        public init(path: String, status: FileStatus, bytes: Int64) {
            self.path = path
            self.status = status
            self.bytes = bytes
        }
    }

    public init(key: String, files: [FileState]) {
        self.key = key
        self.files = files
    }

    public var status: MediaItemStatus { MediaItemStatus(files.map(\.status)) }
    public var bytes: Int64 { files.reduce(0) { $0 + $1.bytes } }

    /// Groups files into items by `grouping`, items in key order, files in path order.
    public static func group(_ files: [FileState], by grouping: ItemGrouping) -> [MediaItem] {
        var byKey: [String: [FileState]] = [:]
        for file in files { byKey[grouping.itemKey(forPath: file.path), default: []].append(file) }
        return byKey.keys.sorted { $0.precedesInUTF8Order($1) }.map { key in
            MediaItem(key: key, files: byKey[key]!.sorted { $0.path.precedesInUTF8Order($1.path) })
        }
    }
}

/// An item's status, from its files' statuses (see DESIGN.md, "Per-file status").
public enum MediaItemStatus: String, Sendable, CaseIterable, Codable {
    /// Every file is in sync.
    case inSync
    /// Some files reached the other side, others are still queued (thumbnail sent, media not yet).
    case filesPending
    /// Files are queued and none has reached the other side yet.
    case queued
    /// Nothing is meant to leave (every file is local only, or a mix with files in sync).
    case localOnly
    /// At least one file is in conflict (and none failed).
    case conflict
    /// At least one file failed for good.
    case syncError

    /// The order of precedence: a failure outweighs a conflict, which outweighs progress.
    public init(_ statuses: [FileStatus]) {
        var seen = Seen()
        for status in statuses { seen.add(status) }
        self.init(seen)
    }

    public init(_ seen: Seen) {
        if seen.contains(.failed) { self = .syncError; return }
        if seen.contains(.conflicted) { self = .conflict; return }
        // An evicted file (remoteOnly) reached the remote: for the item it is in sync.
        switch (seen.contains(.pending), seen.contains(.synced)) {
        case (true, true): self = .filesPending
        case (true, false): self = .queued
        case (false, _): self = seen.contains(.neitherSyncedNorPending) ? .localOnly : .inSync
        }
    }

    /// What an item's files were, as far as its status goes: enough to tell the status of
    /// an item without keeping its files (the daemon tallies a million items this way).
    public struct Seen: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let failed = Seen(rawValue: 1)
        public static let conflicted = Seen(rawValue: 2)
        public static let pending = Seen(rawValue: 4)
        public static let synced = Seen(rawValue: 8)
        public static let neitherSyncedNorPending = Seen(rawValue: 16)

        public mutating func add(_ status: FileStatus) {
            switch status {
            case .syncError: insert(.failed)
            case .conflict: insert(.conflicted)
            case .inSync, .remoteOnly: insert(.synced)
            default: insert(status.isPending ? .pending : .neitherSyncedNorPending)
            }
        }
    }
}
