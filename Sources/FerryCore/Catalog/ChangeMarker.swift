import FerryPluginAPI
import Foundation

/// What one writer (a device's folder pair) changed on a shared remote folder, run by run,
/// so that the other devices learn that nothing changed from one listing of a small folder
/// instead of a listing of the whole tree.
///
/// Each writer keeps one file in the remote's `.ferry-catalog/` folder, named
/// `WRITER.SEQ.changes`, and replaces it (a new name, then the old one deleted) after every
/// run that wrote to the remote. The sequence number is in the name, so a reader sees a
/// change from the folder's listing alone, on servers that give no ETag and whole-second
/// times (nginx) as on any other. The file holds the folders each of the writer's recent
/// runs wrote into; a reader that saw sequence S lists only the folders of the entries
/// after S. Only writers of one name write a file, so devices never race for one.
/// docs/two-way-sync.md, "Knowing that nothing changed".
public struct ChangeMarker: Codable, Sendable, Equatable {
    /// One run's changes.
    public struct Entry: Codable, Sendable, Equatable {
        public var seq: Int
        /// When the run published it (the writer's clock; shown, never compared).
        public var at: Double
        /// Folders written into, relative to the remote root ("" is the root); nil when the
        /// run wrote into too many to name (a reader then lists everything).
        public var folders: [String]?

        public init(seq: Int, at: Double, folders: [String]?) {
            self.seq = seq
            self.at = at
            self.folders = folders
        }
    }

    static let currentVersion = 1
    static let suffix = ".changes"
    /// Entries kept: a reader that missed more of one writer's runs lists everything.
    static let keptEntries = 64
    /// Folders one entry names at most; a run that wrote into more says "everything".
    public static let maxFolders = 2_000
    /// A marker larger than this is refused as hostile.
    static let maxSize: Int64 = 4 << 20

    public var version: Int
    public var writer: String
    /// The writing device's name (`DeviceIdentity.name`), for `status`.
    public var device: String
    /// Oldest first; the last one's `seq` is the file's.
    public var entries: [Entry]

    public init(writer: String, device: String, entries: [Entry]) {
        version = Self.currentVersion
        self.writer = writer
        self.device = device
        self.entries = entries
    }

    public var seq: Int { entries.last?.seq ?? 0 }

    /// The writer's file name for sequence `seq`.
    public static func fileName(writer: String, seq: Int) -> String {
        writer + "." + String(seq) + suffix
    }

    /// The writer and sequence of a marker's file name; nil for any other name (catalogs,
    /// temporary files, a name a hostile server made up).
    public static func parse(fileName: String) -> (writer: String, seq: Int)? {
        guard fileName.hasSuffix(suffix) else { return nil }
        let parts = fileName.dropLast(suffix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, isWriterName(parts[0]), let seq = Int(parts[1]), seq > 0, String(seq) == parts[1] else {
            return nil
        }
        return (String(parts[0]), seq)
    }

    /// A writer's name: the device id and the pair's number in its journal (`writerName`).
    static func isWriterName(_ text: Substring) -> Bool {
        !text.isEmpty && text.count <= 64 && text.allSatisfy { $0.isASCII && ($0.isHexDigit || $0 == "-") }
    }

    /// The writer name of a device's folder pair: two folders of one device that share a
    /// remote folder are two writers, each with sequence numbers of its own. The journal
    /// never gives a pair's number to another (a forgotten pair's comes back as a new one,
    /// whose markers start over under a name of their own).
    public static func writerName(deviceId: String, pairId: Int64) -> String {
        deviceId.filter { $0.isASCII && $0.isHexDigit } + "-" + String(pairId)
    }

    /// The folder a relative path lies in, as markers name it ("" for the root).
    public static func folder(of path: String) -> String {
        path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
    }

    /// This marker with one more run's folders, the oldest entries dropped past the limit.
    public func adding(seq: Int, at time: Double, folders: Set<String>?) -> ChangeMarker {
        var next = self
        let named = folders.flatMap { $0.count <= Self.maxFolders ? $0.sorted() : nil }
        next.entries.append(Entry(seq: seq, at: time, folders: named))
        if next.entries.count > Self.keptEntries { next.entries.removeFirst(next.entries.count - Self.keptEntries) }
        return next
    }

    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    /// A marker from its bytes; nil for anything that is not one of this version, or whose
    /// folders are not relative paths (a reader would list outside the remote folder).
    public static func decode(_ data: Data) -> ChangeMarker? {
        guard let marker = try? JSONDecoder().decode(ChangeMarker.self, from: data), marker.version == currentVersion,
              isWriterName(Substring(marker.writer)), !marker.entries.isEmpty,
              zip(marker.entries, marker.entries.dropFirst()).allSatisfy({ $0.seq < $1.seq }),
              marker.entries.allSatisfy({ ($0.folders ?? []).allSatisfy { $0.isEmpty || (try? RelativePath($0))?.string == $0 } }) else {
            return nil
        }
        return marker
    }
}
