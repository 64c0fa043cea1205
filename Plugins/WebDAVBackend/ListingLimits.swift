/// Bounds that protect against huge or endless listings.
///
/// A `PROPFIND Depth: 1` answer costs roughly 300–450 bytes per entry (nginx and Apache
/// formats), so the defaults accept folders of well over 100,000 files while refusing a
/// server that streams without end.
public struct ListingLimits: Sendable, Equatable {
    /// The largest response body that is parsed at all, in bytes (default 64 MiB).
    public var maxBytes: Int
    /// The most entries one folder may have (default 200,000). The folder's own
    /// `<response>` does not count.
    public var maxEntries: Int

    public init(maxBytes: Int = 64 * 1024 * 1024, maxEntries: Int = 200_000) {
        self.maxBytes = maxBytes
        self.maxEntries = maxEntries
    }
}
