/// Who may ask what, decided before a request reaches the API. Pure: tested as a table.
///
/// - On the Unix socket (mode 0600 in the 0700 state folder) the file system has already
///   said who may connect: no key is asked for.
/// - On TCP every request needs a key (`X-API-Key: KEY` or `Authorization: Bearer KEY`),
///   except the status page's own files (`/`), which hold no data and ask for the key. The
///   key's role (`APIRole`) then decides what it may ask.
/// - On TCP the `Host` must be one the daemon answers to (its address, loopback names,
///   `daemon.allowed_hosts`): a DNS name rebound to 127.0.0.1 by a web page is refused.
///   An `Origin`, when sent (browsers send it on cross-site requests), must be the
///   daemon's own: a page on another site cannot drive the API even with a stolen cookie
///   (there are none) or a guessed key.
public struct RequestGuard: Sendable {
    public enum Transport: Sendable, Equatable {
        case unixSocket
        case tcp(port: Int, tls: Bool)
    }

    public enum Decision: Sendable, Equatable {
        /// Through, as `role` (the key's name for messages); nil for the page's own files.
        case allow(role: APIRole?, key: String?)
        /// 401: no key, or the wrong one.
        case unauthorized(String)
        /// 403: a Host or Origin the daemon does not answer to.
        case forbidden(String)
    }

    /// A key the guard accepts: its name, role and secret.
    public struct AcceptedKey: Sendable, Equatable {
        public var name: String
        public var role: APIRole
        public var secret: String

        public init(name: String, role: APIRole, secret: String) {
            self.name = name
            self.role = role
            self.secret = secret
        }
    }

    public let transport: Transport
    /// Lower-case host names (and addresses, IPv6 without brackets) the daemon answers to.
    public let hosts: Set<String>

    public init(transport: Transport, listenHost: String? = nil, allowedHosts: [String] = []) {
        self.transport = transport
        var hosts: Set<String> = ["localhost", "127.0.0.1", "::1"]
        if let listenHost { hosts.insert(listenHost.lowercased()) }
        for host in allowedHosts { hosts.insert(host.lowercased()) }
        self.hosts = hosts
    }

    /// `path` without the query; `headers` by lower-case name; `keys` the keys valid now.
    public func decide(path: String, headers: [String: String], keys: [AcceptedKey] = []) -> Decision {
        guard case let .tcp(port, tls) = transport else { return .allow(role: .admin, key: nil) }
        guard let host = headers["host"], let (name, hostPort) = Self.split(host: host),
              hosts.contains(name), hostPort == nil || hostPort == port else {
            return .forbidden("this daemon does not answer to Host \(headers["host"] ?? "(none)"); add it to daemon.allowed_hosts")
        }
        if let origin = headers["origin"] {
            let scheme = tls ? "https://" : "http://"
            guard origin.lowercased().hasPrefix(scheme),
                  let (originName, originPort) = Self.split(host: String(origin.dropFirst(scheme.count))),
                  hosts.contains(originName), (originPort ?? (tls ? 443 : 80)) == port else {
                return .forbidden("cross-site request from \(origin) refused")
            }
        }
        if Self.isPublic(path) { return .allow(role: nil, key: nil) }
        let offered = headers["x-api-key"] ?? headers["authorization"].flatMap { value -> String? in
            let parts = value.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
            return String(parts[1]).trimmingCharacters(in: .whitespaces)
        }
        guard let offered else { return .unauthorized("this API needs its key: X-API-Key or Authorization: Bearer") }
        // Every key is compared, whichever matches: the time taken says nothing of which.
        var matched: AcceptedKey?
        for key in keys where Self.constantTimeEqual(offered, key.secret) { matched = matched ?? key }
        guard let matched else { return .unauthorized("wrong API key") }
        return .allow(role: matched.role, key: matched.name)
    }

    /// The status page's own files: they hold no data (the page asks for the key).
    static func isPublic(_ path: String) -> Bool {
        path == "/" || path == "/index.html" || path == "/favicon.ico"
    }

    /// `name[:port]`, `[v6][:port]` → lower-case name (v6 without brackets) and port.
    static func split(host: String) -> (String, Int?)? {
        var text = Substring(host)
        if let slash = text.firstIndex(of: "/") { text = text[..<slash] }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let name = text[text.index(after: text.startIndex)..<close].lowercased()
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return (name, nil) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()) else { return nil }
            return (name, port)
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: return parts[0].isEmpty ? nil : (parts[0].lowercased(), nil)
        case 2:
            guard !parts[0].isEmpty, let port = Int(parts[1]) else { return nil }
            return (parts[0].lowercased(), port)
        default: return nil
        }
    }

    /// Compares without stopping at the first difference, so the time taken says nothing
    /// about how much of a guessed key was right.
    static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8), b = Array(rhs.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
