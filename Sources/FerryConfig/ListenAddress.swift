/// `HOST:PORT` of `daemon.listen`: an IPv4 address, `[IPv6]`, or `localhost`.
public struct ListenAddress: Sendable, Equatable {
    public var host: String
    public var port: Int

    public init?(_ text: String) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            guard !hostPart.contains(":") else { return nil }
        }
        guard !hostPart.isEmpty, let port = Int(portPart), (1...65_535).contains(port) else { return nil }
        host = String(hostPart)
        self.port = port
    }

    /// Only this machine can connect: 127.0.0.0/8, ::1 or localhost.
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
