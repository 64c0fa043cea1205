import Logging

/// Credentials that would cross the network readable by anyone on the path: basic auth
/// or a bearer token over plain `http://` to another machine. Ferry still sends them (a
/// NAS on a home network is often http only), but says so on every run, like `insecure`.
public enum PlainTextCredentials {
    /// The warning for a remote at `baseURL` with these credentials, or nil.
    public static func warning(baseURL: String, credentials: HTTPCredentials, remote: String) -> String? {
        let kind: String
        switch credentials {
        case .basic: kind = "its password in clear text (basic auth)"
        case .bearer: kind = "its bearer token in clear text"
        case .none, .digest, .netrc, .awsSigV4: return nil
        }
        guard baseURL.lowercased().hasPrefix("http://"), !isLoopback(host(of: baseURL)) else { return nil }
        let name = remote.isEmpty ? "this remote" : "remote '\(remote)'"
        return "\(name) sends \(kind) over plain http://: anyone on the network path can read it; "
            + "use https:// (davs://) or auth: digest"
    }

    /// Logs `warning(…)` when there is one.
    public static func warnIfNeeded(baseURL: String, credentials: HTTPCredentials, remote: String) {
        if let text = warning(baseURL: baseURL, credentials: credentials, remote: remote) {
            Logger(label: "ferry.transport").warning("\(text)")
        }
    }

    /// The host of `http://host:port/…`, without brackets or port.
    static func host(of url: String) -> String {
        let rest = url.dropFirst("http://".count)
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        return String(authority.prefix { $0 != ":" }).lowercased()
    }

    /// This machine: nothing crosses a network.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host.hasSuffix(".localhost") || host == "::1" || host.hasPrefix("127.")
    }
}
