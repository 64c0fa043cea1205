import FerryEncryption
import FerryPlanning
import FerryPluginAPI

/// Ferry's validated configuration: what config.yml says, with defaults filled in and every
/// path made absolute. Built only by `ConfigLoader` (or `Config.defaults`), so a value of
/// this type is always consistent: every folder names a remote that exists, every queue
/// name is unique, the default queue exists.
public struct Config: Sendable {
    /// Where the journal lives; nil means `$XDG_STATE_HOME/ferry` (see `StateLocation`).
    public var statePath: String?
    public var remotes: [RemoteConfig]
    public var folders: [FolderConfig]
    /// Queues in priority order, highest first.
    public var queues: [QueueRule]
    /// The queue for files no rule matches.
    public var defaultQueue: String
    public var transfers: TransferSettings
    public var retry: RetryPolicy
    public var scan: ScanSettings
    /// Cold files packed into bundles on push (`archive:`); nil when the section is absent.
    public var archive: ArchiveRule? = nil
    /// How files form media items (`ferry status --items`).
    public var items: ItemGrouping = .standard
    /// `watch:`: quiet period, rescan and poll intervals of `ferry watch` / `ferry daemon`.
    public var watch = WatchSettings()
    /// `schedule:`: runs the daemon starts by itself.
    public var schedules: [ScheduleEntry] = []
    /// `bandwidth:`: limits by time of day, per remote and per queue.
    public var bandwidth = BandwidthSettings()
    /// `daemon:`: the control API's address, key and TLS files.
    public var control = ControlSettings()
    /// `history:`: how long the run history is kept, and the health report's thresholds.
    public var history = HistorySettings()
    /// `limits:`: how deep and how large a remote tree is listed before Ferry gives up.
    public var listingBounds = ListingBounds.standard
    /// `holds:`: when a run that would change too much waits for a person (`ChangeHold`).
    public var holds = HoldPolicy()
    /// The config file this came from, for messages; nil for built-in defaults.
    public var sourceFile: String?

    public func remote(named name: String) -> RemoteConfig? {
        remotes.first { $0.name == name }
    }

    public func folder(named name: String) -> FolderConfig? {
        folders.first { $0.name == name }
    }

    /// The configuration used when no config file exists: no folders or remotes (ad-hoc
    /// pairs only), the standard queues, retry and transfer settings.
    public static let defaults = Config(
        statePath: nil, remotes: [], folders: [], queues: QueueRule.standard, defaultQueue: "media",
        transfers: TransferSettings(), retry: RetryPolicy(), scan: ScanSettings(), sourceFile: nil)
}

/// A named remote: a backend type and its options.
public struct RemoteConfig: Sendable {
    public var name: String
    public var type: String
    public var options: [String: String]
    /// `encryption:`: the backend is wrapped in `EncryptedBackend` (docs/encryption.md).
    public var encryption: EncryptionSettings? = nil
}

/// A local folder paired with a place on a remote.
public struct FolderConfig: Sendable {
    public var name: String
    /// Absolute local path.
    public var localPath: String
    public var remote: String
    public var remotePath: RelativePath
    public var mode: SyncMode
    /// Extra ignore globs for this folder, on top of `scan.ignore`.
    public var ignore: [String]
    /// How a two-way sync settles files changed on both sides (the folder's own setting,
    /// before the queues' ones; see `ConflictPolicies`).
    public var conflict: ConflictPolicies.FolderSetting = .init()
    /// Where a two-way sync puts deleted and overwritten files.
    public var trash: TrashSettings = .standard
    /// `hidden_names: ignore`: a pull or sync from a server that hides names starting with
    /// `.`, with no Ferry catalog there, takes what it sees and does not fail for it.
    public var ignoresHiddenNames = false
    /// `local_limit:`: the cache budget of a pull or sync folder; nil keeps every file.
    public var localLimit: LocalLimit? = nil
    /// `when:`: conditions under which the folder's runs move files.
    public var conditions = RunConditions()
    /// `remote_check:`: how long a push folder trusts the journal's view of its remote
    /// before listing it again; nil for the standard interval.
    public var remoteCheck: Duration? = nil
    /// `remote_rights:`: what Ferry may do to the remote (docs/config.md, "Rights").
    public var rights: RemoteRights = .all
    /// `keep_versions:`, `keep_days:`: with `delete` in the rights, replaced versions are
    /// saved and pruned by these; without `delete` every version is kept.
    public var retention = VersionRetention()
}

/// Global limits on transfers.
public struct TransferSettings: Sendable, Equatable {
    /// Most transfers running at once, over all queues.
    public var maxConcurrent: Int = 4
    /// Bytes per second over all transfers; nil for no limit.
    public var bandwidthLimit: Int64? = nil
    /// Refuse a `--delete` run that would remove more than this share of the target's
    /// files (0…1), unless forced.
    public var maxDeleteShare: Double = 0.5
    /// What a download must leave free on the local disk; a file that would cut into it is
    /// refused (`syncError`, "not enough free space") before a byte is written.
    public var minFreeSpace: FreeSpaceReserve = .standard
    /// Copies on both sides with the same size and modification time that no sync vouched
    /// for are compared byte by byte up to this size; larger ones count as different
    /// (`Planner.lookAlikeDecision`).
    public var compareMaxSize: Int64 = 1 << 30

    public init(maxConcurrent: Int = 4, bandwidthLimit: Int64? = nil, maxDeleteShare: Double = 0.5,
                minFreeSpace: FreeSpaceReserve = .standard, compareMaxSize: Int64 = 1 << 30) {
        self.maxConcurrent = maxConcurrent
        self.bandwidthLimit = bandwidthLimit
        self.maxDeleteShare = maxDeleteShare
        self.minFreeSpace = minFreeSpace
        self.compareMaxSize = compareMaxSize
    }
}

/// How the scanner walks a local folder.
public struct ScanSettings: Sendable, Equatable {
    /// Follow symbolic links that stay inside the folder; links out of it are never followed.
    public var followSymlinks: Bool = false
    /// Globs skipped in every folder, on top of the built-in ones.
    public var ignore: [String] = []

    /// Always skipped: Ferry's own temporary files, partial downloads of other tools,
    /// editor lock files and desktop metadata.
    public static let builtInIgnores = [
        ".*" + TemporaryName.suffix, ".ferry-trash", ".ferry-catalog", "/.ferry-versions", "/.ferry-versions/**", "*.part", "*.tmp", "~$*", ".DS_Store", "Thumbs.db",
    ]

    public init(followSymlinks: Bool = false, ignore: [String] = []) {
        self.followSymlinks = followSymlinks
        self.ignore = ignore
    }
}
