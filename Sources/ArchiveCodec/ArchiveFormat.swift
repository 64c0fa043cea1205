/// The archive formats Ferry writes bundles in.
public enum ArchiveFormat: String, Sendable, CaseIterable, Codable {
    /// tar (pax, so names are UTF-8 and modification times keep nanoseconds) compressed
    /// with zstd: fast, and the best ratio on many small files.
    case tarZstd = "tar.zst"
    /// tar compressed with gzip, for tools without zstd.
    case tarGzip = "tar.gz"
    /// zip (deflate): members compressed one by one, readable everywhere.
    case zip

    /// The file name extension, without the leading dot.
    public var fileExtension: String { rawValue }
}
