import FerryConfig
import FerryPlanning
import FerryPluginAPI

/// A local folder and a place on a backend, resolved and ready to run.
public struct FolderPair: Sendable {
    /// The folder's name in config.yml, or `ad-hoc`.
    public var name: String
    /// Absolute local path.
    public var localRoot: String
    public var backend: any Backend
    public var remoteRoot: RelativePath
    public var mode: SyncMode
    /// Folder-specific ignore globs (on top of the global ones).
    public var ignore: [String]
    /// Two-way sync: the folder's conflict setting (queues' settings come from the config).
    public var conflict: ConflictPolicies.FolderSetting
    /// Two-way sync: where deleted and overwritten files go.
    public var trash: TrashSettings
    /// A pull or sync takes what a server that hides names shows, without failing for the
    /// names it may hide (`hidden_names: ignore`, `--ignore-hidden-names`).
    public var ignoresHiddenNames = false
    /// A pull or sync folder's cache budget (`local_limit:`); nil keeps every file.
    public var localLimit: LocalLimit?
    /// When the folder's runs may move files (`when:`).
    public var conditions = RunConditions()
    /// How long the journal's view of the remote is trusted before a full listing: a push's
    /// between listings, a pull's or sync's when the other writers' change markers say
    /// nothing changed (`remote_check:`; zero lists on every run). docs/remote-check.md.
    public var remoteCheck: Duration
    /// What Ferry may do to the remote (`remote_rights:`).
    public var rights: RemoteRights = .all
    /// How long saved versions are kept where the pair may delete (`keep_versions`, `keep_days`).
    public var retention = VersionRetention()
    /// An upload that replaces a remote file first saves it in the versions folder
    /// (`VersionName`): always without `delete`, and with retention set.
    public var savesVersions: Bool { rights.keepsEveryVersion || (rights.mayWrite && rights.mayDelete && !retention.isEmpty) }
    /// A push's remote is written by Ferry alone, as a rule; a pull's or sync's may be
    /// written by something that marks no change (a phone app, a web interface), so it is
    /// listed in full more often.
    public static func standardRemoteCheck(for mode: SyncMode) -> Duration {
        mode == .push ? .seconds(24 * 3600) : .seconds(3600)
    }

    public init(name: String, localRoot: String, backend: any Backend, remoteRoot: RelativePath, mode: SyncMode, ignore: [String],
                conflict: ConflictPolicies.FolderSetting = .init(), trash: TrashSettings = .standard) {
        self.conflict = conflict
        self.trash = trash
        self.name = name
        self.localRoot = localRoot
        self.backend = backend
        self.remoteRoot = remoteRoot
        self.mode = mode
        self.ignore = ignore
        remoteCheck = Self.standardRemoteCheck(for: mode)
    }

    /// How the journal identifies this pair: the backend and the path on it.
    public var remoteLocation: String {
        remoteRoot.isRoot ? backend.displayName : backend.displayName + "#" + remoteRoot.string
    }
}
