import FerryPluginAPI

/// When and how a file is sent in parts.
public struct MultipartSettings: Sendable, Equatable {
    /// Files larger than this go in parts (default 64 MiB).
    public var threshold: Int64 = 64 << 20
    /// The preferred part size (default 16 MiB; grown to stay under 10,000 parts).
    public var partSize: Int64 = 16 << 20
    /// Parts of one file in flight at once (default 4).
    public var concurrency: Int = 4
    /// Uploads left unfinished for this long are aborted at the start of a push, so their
    /// parts stop taking space (default 7 days), unless the journal means to continue
    /// them; nil never aborts them on its own (`ferry doctor --cleanup` still does).
    public var abandonAfterSeconds: Int64? = 7 * 86_400

    public init() {}

    /// The settings a remote's options give (`multipart_threshold`, `multipart_part_size`,
    /// `multipart_concurrency`, `abandoned_uploads_after`).
    public init(options: [String: String], remote: String) throws(BackendError) {
        if let text = options["multipart_threshold"] {
            guard let bytes = Quantity.bytes(text), bytes >= MultipartPlan.minimumPartSize else {
                throw BackendError(.invalidName, "remote '\(remote)': multipart_threshold must be a size of at least 5M (got '\(text)')")
            }
            threshold = bytes
        }
        if let text = options["multipart_part_size"] {
            guard let bytes = Quantity.bytes(text), bytes >= MultipartPlan.minimumPartSize, bytes <= 5 << 30 else {
                throw BackendError(.invalidName, "remote '\(remote)': multipart_part_size must be between 5M and 5G (got '\(text)')")
            }
            partSize = bytes
        }
        if let text = options["multipart_concurrency"] {
            guard let count = Int(text), (1...64).contains(count) else {
                throw BackendError(.invalidName, "remote '\(remote)': multipart_concurrency must be 1 to 64 (got '\(text)')")
            }
            concurrency = count
        }
        if let text = options["abandoned_uploads_after"] {
            guard let duration = Quantity.duration(text), duration >= .zero else {
                throw BackendError(.invalidName, "remote '\(remote)': abandoned_uploads_after must be a duration such as 7d or 12h, 0 for never (got '\(text)')")
            }
            let seconds = duration.components.seconds
            abandonAfterSeconds = seconds == 0 ? nil : seconds
        }
    }
}
