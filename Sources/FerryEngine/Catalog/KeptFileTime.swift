import FerryPlanning
import FerryPluginAPI

/// A file's modification time as the remote catalog keeps it, for a store that keeps none
/// itself: an S3-compatible gateway that drops user metadata (`x-amz-meta-mtime`) lists
/// and serves only the time of the upload. A push or sync to such a store writes the times
/// of the files it put there into its catalog; a pull gives a downloaded file the kept
/// time instead of the upload's.
///
/// The time belongs to one version of the file, named by size and ETag: a file another
/// writer replaced since does not get it.
public struct KeptFileTime: Codable, Sendable, Equatable {
    /// Relative to the pair's remote root, as the remote spells it.
    public var path: String
    public var size: Int64
    public var etag: String
    public var modifiedNanos: Int64

    public init(path: String, size: Int64, etag: String, modifiedNanos: Int64) {
        self.path = path
        self.size = size
        self.etag = etag
        self.modifiedNanos = modifiedNanos
    }

    /// The kept time, when `entry` (what a download fetched, or a listing showed) is the
    /// version it was kept for.
    public func time(for entry: RemoteEntry) -> Int64? {
        guard let listed = entry.etag, entry.size == size else { return nil }
        let kept = RemoteVersion(size: size, modifiedNanos: nil, etag: etag)
        return kept.isSameVersion(as: RemoteVersion(size: entry.size, modifiedNanos: nil, etag: listed)) ? modifiedNanos : nil
    }

    /// Whether a store's capabilities call for kept times: it keeps no modification time
    /// of an upload, and its listings carry version tags that tie a kept time to the very
    /// version it was kept for (a WebDAV server that keeps no times lists no ETags, and
    /// sizes alone would hand a time to another version of the same size).
    public static func needed(by capabilities: BackendCapabilities) -> Bool {
        !capabilities.preservesModificationTime && capabilities.listingHasETags
    }
}
