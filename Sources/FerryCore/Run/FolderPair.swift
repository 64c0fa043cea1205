import FerryPluginAPI

/// A local folder and a place on a backend, resolved and ready to run.
public struct FolderPair: Sendable {
    /// The folder's name in config.yml, or `ad-hoc`.
    public var name: String
    /// Absolute local path.
    public var localRoot: String
    public var backend: any Backend
    public var remoteRoot: RemotePath
    public var mode: SyncMode
    /// Folder-specific ignore globs (on top of the global ones).
    public var ignore: [String]

    public init(name: String, localRoot: String, backend: any Backend, remoteRoot: RemotePath, mode: SyncMode, ignore: [String]) {
        self.name = name
        self.localRoot = localRoot
        self.backend = backend
        self.remoteRoot = remoteRoot
        self.mode = mode
        self.ignore = ignore
    }

    /// How the journal identifies this pair: the backend and the path on it.
    public var remoteLocation: String {
        remoteRoot.isRoot ? backend.displayName : backend.displayName + "#" + remoteRoot.string
    }
}
