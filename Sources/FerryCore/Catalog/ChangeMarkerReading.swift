import FerryPluginAPI

/// How a reader decides, from the other writers' change markers (`ChangeMarker`), how
/// much of the remote it must list: nothing, some folders, or everything. Pure: the
/// listing of the markers' folder and the markers' contents come in, the answer goes out.
public enum ChangeMarkerReading {
    /// What the reader last saw of one writer.
    public struct Seen: Sendable, Equatable {
        public var seq: Int
        /// The writer's device name and the time of its newest change, for `status`.
        public var device: String
        public var changedAt: Double

        public init(seq: Int, device: String, changedAt: Double) {
            self.seq = seq
            self.device = device
            self.changedAt = changedAt
        }
    }

    /// One writer's newest marker file, from the listing.
    public struct Listed: Sendable, Equatable {
        public var writer: String
        public var seq: Int
        public var path: RelativePath
    }

    public enum FirstLook: Sendable, Equatable {
        /// No other writer wrote since the reader last looked: the journal is the remote side.
        case unchanged
        /// These writers wrote since: their markers say where.
        case read([Listed])
        /// Only a full listing can tell (why, for the log).
        case listEverything(String)
    }

    public enum Answer: Sendable, Equatable {
        /// List these folders (relative to the remote root) and trust the journal elsewhere.
        case folders(Set<String>)
        case listEverything(String)
    }

    /// Each writer's newest marker among the listed files (names that are not markers left out).
    public static func newest(in listing: [RemoteEntry]) -> [String: Listed] {
        var newest: [String: Listed] = [:]
        for entry in listing where entry.kind == .file && entry.size <= ChangeMarker.maxSize {
            guard let (writer, seq) = ChangeMarker.parse(fileName: entry.path.name) else { continue }
            if let known = newest[writer], known.seq >= seq { continue }
            newest[writer] = Listed(writer: writer, seq: seq, path: entry.path)
        }
        return newest
    }

    /// The first look: the markers' folder listing against what the reader saw last.
    /// `own`: the reader's own writer name, whose changes its journal already holds.
    public static func firstLook(listed: [String: Listed], seen: [String: Seen], own: String) -> FirstLook {
        let others = listed.filter { $0.key != own }
        // Markers vouch for a folder that several Ferry devices share. Where no other device
        // marks its changes, whoever else writes there (a phone app, a web interface, a
        // person) marks nothing either: only a listing tells.
        if others.isEmpty && seen.isEmpty {
            return .listEverything("no other device marks its changes here")
        }
        for writer in seen.keys.sorted() where writer != own && others[writer] == nil {
            return .listEverything("the change marker of \(writer) is gone")
        }
        var toRead: [Listed] = []
        for (writer, marker) in others.sorted(by: { $0.key < $1.key }) {
            guard let known = seen[writer] else {
                toRead.append(marker)
                continue
            }
            if marker.seq < known.seq { return .listEverything("the change marker of \(writer) went back") }
            if marker.seq > known.seq { toRead.append(marker) }
        }
        return toRead.isEmpty ? .unchanged : .read(toRead)
    }

    /// The folders to list, from the markers of the writers that wrote since the reader
    /// last looked. A marker that is missing, damaged, trimmed past what the reader saw or
    /// names no folders means a full listing.
    public static func answer(read markers: [(listed: Listed, marker: ChangeMarker?)], seen: [String: Seen]) -> Answer {
        var folders: Set<String> = []
        for (listed, marker) in markers {
            guard let marker, marker.writer == listed.writer, marker.seq == listed.seq else {
                return .listEverything("the change marker of \(listed.writer) could not be read")
            }
            let after = seen[listed.writer]?.seq ?? 0
            guard let first = marker.entries.first, first.seq <= after + 1 else {
                return .listEverything("the change marker of \(listed.writer) no longer goes back to what was seen")
            }
            for entry in marker.entries where entry.seq > after {
                guard let named = entry.folders else {
                    return .listEverything("\(listed.writer) wrote into too many folders to name")
                }
                folders.formUnion(named)
            }
            if folders.count > ChangeMarker.maxFolders { return .listEverything("too many folders changed") }
        }
        return .folders(folders)
    }

    /// `answer` widened by the folders the reader itself wrote into and never announced
    /// (`pending`; nil: too many to name). A run of the reader's own that stopped part-way
    /// (killed, a crash) may have put files there that its journal never recorded: the
    /// journal cannot stand for the remote in those folders, or the next run would upload
    /// over its own unrecorded copy and keep both as a conflict.
    public static func answer(_ answer: Answer, listingAlso pending: Set<String>?) -> Answer {
        guard case let .folders(folders) = answer else { return answer }
        guard let pending else { return .listEverything("a run of this device stopped before it announced where it wrote") }
        let all = folders.union(pending)
        return all.count > ChangeMarker.maxFolders ? .listEverything("too many folders changed") : .folders(all)
    }

    /// What the reader has seen once it has read `markers` (and listed what they name).
    public static func seen(after markers: [(listed: Listed, marker: ChangeMarker?)], listed: [String: Listed],
                            before: [String: Seen], own: String) -> [String: Seen] {
        var seen: [String: Seen] = [:]
        for (writer, marker) in listed where writer != own {
            seen[writer] = before[writer].map { Seen(seq: marker.seq, device: $0.device, changedAt: $0.changedAt) }
                ?? Seen(seq: marker.seq, device: "", changedAt: 0)
        }
        for (listed, marker) in markers {
            guard let marker, let last = marker.entries.last else { continue }
            seen[listed.writer] = Seen(seq: listed.seq, device: String(marker.device.prefix(64)), changedAt: last.at)
        }
        return seen
    }
}
