import FerryPluginAPI
import FerrySystem

/// Where a two-way sync puts the files it deletes or overwrites, instead of destroying them.
///
/// Each run files its trash under a folder named for its start time (`20261122-225012`),
/// so that expiry is a matter of folder names and needs no per-file bookkeeping.
public struct TrashSettings: Sendable, Equatable {
    /// Off: deletions and overwrites destroy the old version (as push/pull `--delete` do).
    public var enabled: Bool
    /// The local trash: a path relative to the folder, or absolute. It must be on the same
    /// disk as the folder (files are renamed into it, not copied).
    public var localPath: String
    /// The remote trash, relative to the remote's root; nil means `.ferry-trash` inside the
    /// folder's remote path.
    public var remotePath: RelativePath?
    /// Seconds a run's trash folder is kept; nil keeps it forever.
    public var keepSeconds: Double?

    public static let folderName = ".ferry-trash"

    public static let standard = TrashSettings(enabled: true, localPath: folderName, remotePath: nil,
                                               keepSeconds: 30 * 86_400)

    public init(enabled: Bool, localPath: String, remotePath: RelativePath?, keepSeconds: Double?) {
        self.enabled = enabled
        self.localPath = localPath
        self.remotePath = remotePath
        self.keepSeconds = keepSeconds
    }

    /// The absolute local trash folder of a folder whose root is `localRoot`.
    public func localFolder(root localRoot: String) -> String {
        LocalFileSystem.absolute(localPath, relativeTo: localRoot)
    }

    /// The remote trash folder of a pair whose remote root is `remoteRoot`.
    public func remoteFolder(root remoteRoot: RelativePath) -> RelativePath {
        if let remotePath { return remotePath }
        return (try? remoteRoot.appending(Self.folderName)) ?? remoteRoot
    }
}
