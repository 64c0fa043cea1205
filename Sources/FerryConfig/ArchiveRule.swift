import ArchiveCodec

/// `archive:` in config.yml: which cold files a push packs into bundles instead of sending
/// them one by one. A file is bundled when it matches `match`, is at most `maxFileSize`
/// bytes, was last modified more than `olderThan` ago, and is new on the remote; bundles
/// hold up to `bundleSize` bytes of files and are made only when at least `minFiles` such
/// files are waiting (fewer go as plain files).
public struct ArchiveRule: Sendable, Equatable {
    /// Globs on the path inside the folder, as in queue rules; any one matching is enough.
    public var match: [String] = ["*"]
    public var olderThan: Duration = .seconds(30 * 86_400)
    public var maxFileSize: Int64 = 256 << 10
    public var bundleSize: Int64 = 64 << 20
    public var format: ArchiveFormat = .tarZstd
    public var minFiles: Int = 10

    public init(match: [String] = ["*"], olderThan: Duration = .seconds(30 * 86_400), maxFileSize: Int64 = 256 << 10,
                bundleSize: Int64 = 64 << 20, format: ArchiveFormat = .tarZstd, minFiles: Int = 10) {
        self.match = match
        self.olderThan = olderThan
        self.maxFileSize = maxFileSize
        self.bundleSize = bundleSize
        self.format = format
        self.minFiles = minFiles
    }
}
