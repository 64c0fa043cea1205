/// How the transport talks to one server.
public struct CurlTransportSettings: Sendable {
    /// Seconds to establish a connection.
    public var connectTimeout: Int = 15
    /// Seconds without a single byte moving before a transfer is abandoned as stalled; a
    /// stall timeout rather than a total timeout, so big transfers are never cut short.
    public var stallTimeout: Int = 60
    public var maxRedirects: Int = 5
    public var credentials: HTTPCredentials = .none
    /// A CA bundle to verify the server with, instead of the system's.
    public var caFile: String?
    /// Skip TLS verification (explicit opt-in; Ferry warns when it is on).
    public var insecure = false
    public var userAgent = "ferry/0.1"
    /// Streams a large download is spread over, each fetching ranges of the file, where
    /// the server takes ranges (1: one stream). On a fast link one stream is bounded by
    /// one connection's window and one thread's copying; rclone uses 4 too.
    public var downloadStreams = 4
    /// Files at least this large are downloaded over `downloadStreams` streams; below it
    /// the extra requests (a HEAD, a GET per segment) cost more than they save.
    public var multiStreamCutoff: Int64 = 64 << 20

    public init() {}
}
