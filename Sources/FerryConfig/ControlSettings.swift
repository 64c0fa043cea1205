/// How the daemon serves its control API (`daemon:` in config.yml). The Unix socket
/// `control.sock` in the state folder is always served; a TCP address only when `listen`
/// is set.
public struct ControlSettings: Sendable, Equatable {
    /// `HOST:PORT` to serve the API and the status page on as well, e.g. `127.0.0.1:8384`.
    public var listen: String?
    /// The API key's file (mode 0600); nil: `api-key` in the state folder, made on first start.
    public var apiKeyFile: String?
    /// PEM certificate chain and private key: required for an address that is not loopback.
    public var tlsCertificate: String?
    public var tlsKey: String?
    /// An address other than loopback must be asked for by name, on top of `listen`.
    public var allowNonLoopback = false
    /// Host names (besides the address itself, `localhost` and loopback addresses) that a
    /// request's `Host` may carry, e.g. the machine's name on the LAN.
    public var allowedHosts: [String] = []

    public init() {}
}

/// The run history (`history:` in config.yml): every run's figures, kept for a while,
/// read by `ferry status --history`, `ferry doctor` and the status page's chart.
public struct HistorySettings: Sendable, Equatable {
    /// Rows older than this are removed.
    public var keep: Duration = .seconds(30 * 86_400)
    /// `ferry doctor` reports a remote offline for more than this share of the last day.
    public var offlineAlert: Double = 0.1

    public init() {}
}
