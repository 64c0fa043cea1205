import FerryEngine
import Foundation

/// The description of one bundle that travels with it on the remote
/// (`.ferry-bundles/NAME.manifest.json`): which file is in it under which entry name, with
/// size, modification time (nanoseconds) and SHA-256. It is what lets a pull into an empty
/// folder with a fresh journal find and restore bundled files, and it is rewritten when
/// files leave the bundle.
///
/// Read from the remote, so untrusted: `decode` checks the shape, and the catalog checks
/// every member path before it is used.
public struct BundleManifest: Codable, Sendable, Equatable {
    public struct Member: Codable, Sendable, Equatable {
        /// The file's path inside the folder pair.
        public var path: String
        /// The member's name inside the archive.
        public var entry: String
        public var size: Int64
        public var modifiedNanos: Int64
        public var sha256: String
    }

    public static let currentVersion = 1
    /// A manifest larger than this is refused unread: it is read whole and decoded, which
    /// takes several times its size in memory (256 MiB, the bound before, cost 1.6 GB).
    /// Ferry's own stay under `plannedMaxSize` (`BundlePlanner` closes a bundle before).
    public static let maxSize: Int64 = 16 << 20
    /// What Ferry lets one of its own manifests grow to: half the bound, so a manifest
    /// written by this version is always read back by it.
    public static let plannedMaxSize: Int64 = maxSize / 2

    /// What a member adds to a manifest, at most: its path twice (`path`, `entry`) as JSON
    /// escapes it (`/` is `\/`, a control character `\u00XX`) and the rest of the object
    /// (keys, size, time, SHA-256).
    public static func bytes(forMemberPath path: String) -> Int64 {
        var escaped: Int64 = 0
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "/"), UInt8(ascii: "\""), UInt8(ascii: "\\"): escaped += 2
            case 0..<0x20: escaped += 6
            default: escaped += 1
            }
        }
        return escaped * 2 + 200
    }

    public var ferryBundleManifest: Int
    /// The bundle's file name beside the manifest.
    public var bundle: String
    public var format: String
    public var size: Int64
    public var createdAt: Double
    public var members: [Member]

    public init(bundle: String, format: String, size: Int64, createdAt: Double, members: [Member]) {
        self.ferryBundleManifest = Self.currentVersion
        self.bundle = bundle
        self.format = format
        self.size = size
        self.createdAt = createdAt
        self.members = members
    }

    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain strings and integers cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    public static func decode(_ data: Data, name: String) throws(BundleError) -> BundleManifest {
        let manifest: BundleManifest
        do {
            manifest = try JSONDecoder().decode(BundleManifest.self, from: data)
        } catch {
            throw BundleError("the bundle manifest \(name) is not valid (\(error)); remove it and its bundle from the remote, then push again")
        }
        guard manifest.ferryBundleManifest == currentVersion else {
            throw BundleError("the bundle manifest \(name) has version \(manifest.ferryBundleManifest), this Ferry reads version \(currentVersion); update Ferry")
        }
        guard BundleNaming.isBundleName(manifest.bundle), BundleNaming.manifestName(for: manifest.bundle) == name else {
            throw BundleError("the bundle manifest \(name) names bundle '\(manifest.bundle)', which does not belong to it")
        }
        return manifest
    }
}

/// A bundle that cannot be built, read or used, as a whole.
public struct BundleError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
