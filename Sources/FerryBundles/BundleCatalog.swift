import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI

/// The bundles on a pair's remote and the files inside them, as their manifests say:
/// what lets the planner see a bundled file as present on the remote.
///
/// A plain remote file of the same path wins over a bundle member: only files new on the
/// remote are ever bundled, so a plain copy beside a member is always the later one (the
/// member's file changed and was sent plain, and the crash came before its manifest was
/// rewritten). Between two bundles naming one path, the newer bundle wins.
public struct BundleCatalog: Sendable {
    /// One live member: where a file's remote copy is.
    public struct Member: Sendable, Equatable {
        public var bundle: String
        public var entryName: String
        public var size: Int64
        public var modifiedNanos: Int64
        public var sha256: String
    }

    /// A manifest entry that was not taken, with why (hostile or invalid path).
    public struct Refusal: Sendable, Equatable {
        public var bundle: String
        public var path: String
        public var reason: String
    }

    /// Bundles by file name, with their manifests' record.
    public private(set) var bundles: [String: BundleRecord] = [:]
    /// The bundle files as listed on the remote.
    public private(set) var bundleFiles: [String: RemoteEntry] = [:]
    /// Live members by file path.
    public private(set) var members: [String: Member] = [:]
    public private(set) var refusals: [Refusal] = []
    /// Paths the planner saw only through a bundle (no plain remote file).
    public private(set) var bundledOnlyPaths: Set<String> = []
    /// Files in the bundle folder that belong to nothing: a bundle without its manifest or
    /// a manifest without its bundle (a push stopped between the two uploads), or names
    /// Ferry does not make.
    public var orphans: [RemoteEntry] = []

    public init() {}

    public var isEmpty: Bool { bundles.isEmpty }

    /// Adds one bundle's members (from its manifest or the journal). Member paths are
    /// checked like any remote name: relative, no `.`/`..`, no control characters, not
    /// inside the bundle folder; anything else is a refusal, never a path to write.
    public mutating func add(_ bundle: BundleRecord, file: RemoteEntry, members list: [BundleMemberRecord]) {
        bundles[bundle.name] = bundle
        bundleFiles[bundle.name] = file
        for member in list where !member.stale {
            if let reason = Self.refusalReason(member.path) ?? Self.refusalReason(member.entryName) {
                refusals.append(Refusal(bundle: bundle.name, path: member.path, reason: reason))
                continue
            }
            if let existing = members[member.path], let other = bundles[existing.bundle],
               other.createdAt > bundle.createdAt || (other.createdAt == bundle.createdAt && existing.bundle > bundle.name) {
                continue
            }
            members[member.path] = Member(bundle: bundle.name, entryName: member.entryName, size: member.size,
                                          modifiedNanos: member.modifiedNanos, sha256: member.sha256)
        }
    }

    /// Why a member path from a manifest cannot be used, or nil when it can.
    package static func refusalReason(_ path: String) -> String? {
        if path.hasPrefix("/") { return "refusing an absolute member path" }
        guard let parsed = try? RelativePath(path) else { return "refusing a member path with '..', '.' or a control character" }
        if parsed.string != path { return "refusing a member path that is not in normal form" }
        if parsed.components.first == BundleNaming.folderName { return "refusing a member path inside \(BundleNaming.folderName)" }
        return nil
    }

    /// Adds a remote entry for every live member that has no plain file on the remote, as
    /// the planner's view of the remote (keyed by path inside the pair, like the listing).
    /// Members the pair ignores (its patterns, and the state folder when it lies inside the
    /// folder) are dropped first, as a plain remote file of that name would be: a manifest
    /// naming `state/api-key` must never have it restored into the state folder.
    public mutating func addVirtualEntries(to remote: inout [String: RemoteEntry], root: RelativePath, ignore: GlobSet? = nil) {
        if let ignore {
            for path in members.keys where ignore.matches(path) { members[path] = nil }
        }
        for (path, member) in members where remote[path] == nil {
            guard let relative = try? RelativePath(path) else { continue }
            remote[path] = RemoteEntry(path: root.appending(relative), kind: .file, size: member.size,
                                       modifiedNanos: member.modifiedNanos, etag: nil)
            bundledOnlyPaths.insert(path)
        }
    }
}
