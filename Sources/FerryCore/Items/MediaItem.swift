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
        if statuses.contains(.syncError) { self = .syncError; return }
        if statuses.contains(.conflict) { self = .conflict; return }
        let pending = statuses.contains { $0.isPending }
        // An evicted file (remoteOnly) reached the remote: for the item it is in sync.
        let synced = statuses.contains { $0 == .inSync || $0 == .remoteOnly }
        switch (pending, synced) {
        case (true, true): self = .filesPending
        case (true, false): self = .queued
        case (false, _): self = statuses.allSatisfy { $0 == .inSync || $0 == .remoteOnly } ? .inSync : .localOnly
        }
    }
}
