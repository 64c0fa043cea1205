/// How far `Backend.listTree` walks a remote before it gives up with an error naming the
/// bound: a remote can list folders without end (a hostile server, a loop of links on a
/// share), and every entry listed is held in memory until planning. `limits:` in
/// config.yml sets them.
public struct ListingBounds: Sendable, Equatable {
    /// Folders deeper than this below the listed folder are refused (`limits.remote_depth`).
    /// 64 is deeper than real trees go, and keeps a hostile one small: an entry holds its
    /// path's components, so memory grows with entries times depth (a walk 256 deep and
    /// 200 wide held 330 MiB).
    public var maxDepth: Int
    /// More files and folders than this in the whole tree are refused
    /// (`limits.remote_entries`); a few hundred bytes of memory each.
    public var maxEntries: Int

    public init(maxDepth: Int = 64, maxEntries: Int = 5_000_000) {
        self.maxDepth = maxDepth
        self.maxEntries = maxEntries
    }

    public static let standard = ListingBounds()

    /// The config keys, for the errors that name them.
    public static let depthKey = "limits.remote_depth"
    public static let entriesKey = "limits.remote_entries"

    public func tooDeep(_ folder: RelativePath, below top: RelativePath) -> BackendError {
        BackendError(.protocolViolation,
                     "the remote's folders go deeper than \(maxDepth) levels below \(top.isRoot ? "its root" : top.description) "
                        + "(\(Self.depthKey)); stopped listing at \(folder.description). Raise \(Self.depthKey) in config.yml "
                        + "if the tree is really that deep", retryable: false)
    }

    public func tooMany(below top: RelativePath) -> BackendError {
        BackendError(.protocolViolation,
                     "the remote lists more than \(maxEntries) files and folders below \(top.isRoot ? "its root" : top.description) "
                        + "(\(Self.entriesKey)); stopped listing. Raise \(Self.entriesKey) in config.yml if the tree is really that large",
                     retryable: false)
    }
}
