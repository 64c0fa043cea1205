import FerryConfig
import FerryPlanning
import FerryPluginAPI
import Foundation

/// What Ferry put on a remote under names that some servers leave out of their listings.
///
/// nginx's WebDAV module never lists a name that starts with `.` (`.thumbnails/`,
/// `.nomedia`), though it stores and serves it. A pull into a fresh state would miss such
/// files and exit 0. So a push or sync keeps, per folder pair, a small catalog of the paths
/// it put on the remote that have a component starting with `.`, in the remote's
/// `.ferry-catalog/` folder; a pull, sync or verify fetches it (by name, which nginx serves)
/// and reads it together with the listing. Each writer (machine and local folder) has a
/// file of its own, so two machines pushing into one folder never overwrite each other's.
public struct RemoteCatalog: Codable, Sendable, Equatable {
    public struct Entry: Codable, Sendable, Equatable {
        public var path: String
        public var size: Int64
        public var modifiedNanos: Int64?

        public init(path: String, size: Int64, modifiedNanos: Int64?) {
            self.path = path
            self.size = size
            self.modifiedNanos = modifiedNanos
        }
    }

    public static let folderName = ".ferry-catalog"
    /// A catalog file larger than this is refused: 250,000 hidden paths fit in about 15 MiB.
    public static let maxSize: Int64 = 32 << 20
    /// At most this many paths across every writer's catalog. Each one is looked at with a
    /// request of its own (`mergeCatalog`), and held in memory until the plan is made: four
    /// catalogs of 40 MiB once took a pull to 775 MB. Past it, the run stops and says why
    /// rather than read on or leave hidden files out unsaid.
    public static let maxEntries = 250_000
    package static let currentVersion = 1

    /// At most this many kept times (`times`) in one writer's catalog: about 12 MiB of them.
    public static let maxTimes = 100_000

    public var version: Int
    /// In path order.
    public var entries: [Entry]
    /// Modification times of the files this writer put on a store that keeps none
    /// (`KeptFileTime`), in path order; absent (and left out of the file, which then reads
    /// as before) for every other store.
    public var times: [KeptFileTime]?

    public init(entries: [Entry], times: [KeptFileTime]? = nil) {
        version = Self.currentVersion
        self.entries = entries.sorted { $0.path.precedesInUTF8Order($1.path) }
        self.times = times?.sorted { $0.path.precedesInUTF8Order($1.path) }
    }

    /// The catalog folder of a pair whose remote root is `remoteRoot`.
    public static func folder(in remoteRoot: RelativePath) -> RelativePath {
        (try? remoteRoot.appending(folderName)) ?? remoteRoot
    }

    /// This writer's file name: the host and a hash of the local folder, so each machine and
    /// folder writes a file of its own.
    public static func fileName(host: String, localRoot: String) -> String {
        SyncPlanSettings.sanitisedHost(host) + "-" + TemporaryName.fnv1a64Hex(localRoot) + ".json"
    }

    /// Whether a relative path belongs in the catalog: a component starts with `.`, and it
    /// is not one of Ferry's own folders (bundles, trash, the catalog itself).
    public static func covers(_ path: String) -> Bool {
        guard path.hasPrefix(".") || path.contains("/.") else { return false }
        let first = path.split(separator: "/", maxSplits: 1).first.map(String.init) ?? path
        return ![folderName, BundleNaming.folderName, TrashSettings.folderName, VersionName.folderName].contains(first)
    }

    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    /// A catalog from its bytes; nil for anything that is not one (a newer version, damage).
    public static func decode(_ data: Data) -> RemoteCatalog? {
        guard let catalog = try? JSONDecoder().decode(RemoteCatalog.self, from: data),
              catalog.version == currentVersion,
              catalog.entries.allSatisfy({ covers($0.path) && (try? RelativePath($0.path)) != nil && $0.size >= 0 }),
              (catalog.times ?? []).allSatisfy({ (try? RelativePath($0.path)) != nil && $0.size >= 0 }) else {
            return nil
        }
        return catalog
    }

    /// The hidden folders of the catalog's paths (`.thumbnails`, `DCIM/.trashed`), to tell
    /// a listing to look into them.
    public var hiddenFolders: Set<String> {
        var folders: Set<String> = []
        for entry in entries {
            var components = entry.path.split(separator: "/").dropLast()
            while !components.isEmpty {
                if components.last?.hasPrefix(".") == true { folders.insert(components.joined(separator: "/")) }
                components.removeLast()
            }
        }
        return folders
    }
}
