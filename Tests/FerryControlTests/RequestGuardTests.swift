@testable import FerryControl
import Testing

/// Who may ask what: the key on TCP, Host against DNS rebinding, Origin against other sites.
@Suite("RequestGuard")
struct RequestGuardTests {
    static let key = "0123456789abcdef0123456789abcdef"
    static let readKey = "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"
    static let keys = [RequestGuard.AcceptedKey(name: "default", role: .admin, secret: key),
                       RequestGuard.AcceptedKey(name: "wall", role: .read, secret: readKey)]
    static let tcp = RequestGuard(transport: .tcp(port: 8384, tls: false), listenHost: "127.0.0.1",
                                  allowedHosts: ["nas.local"])

    enum Expected: Equatable { case allow, unauthorized, forbidden }

    static func outcome(_ decision: RequestGuard.Decision) -> Expected {
        switch decision {
        case .allow: .allow
        case .unauthorized: .unauthorized
        case .forbidden: .forbidden
        }
    }

    static let cases: [(String, String, [String: String], Expected)] = [
        ("key in X-API-Key", "/v1/status", ["host": "127.0.0.1:8384", "x-api-key": key], .allow),
        ("key as a bearer token", "/v1/status", ["host": "127.0.0.1:8384", "authorization": "Bearer \(key)"], .allow),
        ("no key", "/v1/status", ["host": "127.0.0.1:8384"], .unauthorized),
        ("wrong key", "/v1/status", ["host": "127.0.0.1:8384", "x-api-key": String(key.reversed())], .unauthorized),
        ("a key one character short", "/v1/status", ["host": "127.0.0.1:8384", "x-api-key": String(key.dropLast())], .unauthorized),
        ("basic auth is not the key", "/v1/status", ["host": "127.0.0.1:8384", "authorization": "Basic \(key)"], .unauthorized),
        ("metrics need the key", "/metrics", ["host": "127.0.0.1:8384"], .unauthorized),
        ("the page does not", "/", ["host": "127.0.0.1:8384"], .allow),
        ("localhost", "/v1/status", ["host": "localhost:8384", "x-api-key": key], .allow),
        ("IPv6 loopback", "/v1/status", ["host": "[::1]:8384", "x-api-key": key], .allow),
        ("an allowed name", "/v1/status", ["host": "NAS.local:8384", "x-api-key": key], .allow),
        ("a rebound name", "/v1/status", ["host": "attacker.example:8384", "x-api-key": key], .forbidden),
        ("a rebound name, even for the page", "/", ["host": "attacker.example:8384"], .forbidden),
        ("another port", "/v1/status", ["host": "127.0.0.1:9999", "x-api-key": key], .forbidden),
        ("no Host", "/v1/status", ["x-api-key": key], .forbidden),
        ("same origin", "/v1/status", ["host": "127.0.0.1:8384", "origin": "http://127.0.0.1:8384", "x-api-key": key], .allow),
        ("another site", "/v1/status", ["host": "127.0.0.1:8384", "origin": "http://attacker.example", "x-api-key": key], .forbidden),
        ("https origin on a plain daemon", "/v1/status", ["host": "127.0.0.1:8384", "origin": "https://127.0.0.1:8384", "x-api-key": key], .forbidden),
        ("an opaque origin", "/v1/status", ["host": "127.0.0.1:8384", "origin": "null", "x-api-key": key], .forbidden),
    ]

    @Test(arguments: cases.indices)
    func tcp(index: Int) {
        let (name, path, headers, expected) = Self.cases[index]
        #expect(Self.outcome(Self.tcp.decide(path: path, headers: headers, keys: Self.keys)) == expected, "\(name)")
    }

    @Test("the Unix socket asks for nothing: its mode says who may connect")
    func unixSocket() {
        let guardian = RequestGuard(transport: .unixSocket)
        #expect(guardian.decide(path: "/v1/status", headers: [:]) == .allow(role: .admin, key: nil))
        #expect(guardian.decide(path: "/v1/status", headers: ["host": "attacker.example"]) == .allow(role: .admin, key: nil))
    }

    @Test("TLS: the origin is https, port 443 when left out")
    func tls() {
        let guardian = RequestGuard(transport: .tcp(port: 443, tls: true), listenHost: "0.0.0.0", allowedHosts: ["nas.local"])
        #expect(guardian.decide(path: "/v1/status", headers: ["host": "nas.local", "origin": "https://nas.local", "x-api-key": Self.key],
                                keys: Self.keys) == .allow(role: .admin, key: "default"))
        #expect(Self.outcome(guardian.decide(path: "/v1/status", headers: ["host": "nas.local", "origin": "http://nas.local", "x-api-key": Self.key],
                                             keys: Self.keys)) == .forbidden)
    }

    @Test("a key is known by its role and name; a revoked one (no longer listed) is refused")
    func roles() {
        let headers = ["host": "127.0.0.1:8384", "x-api-key": Self.readKey]
        #expect(Self.tcp.decide(path: "/v1/status", headers: headers, keys: Self.keys) == .allow(role: .read, key: "wall"))
        #expect(Self.outcome(Self.tcp.decide(path: "/v1/status", headers: headers, keys: [Self.keys[0]])) == .unauthorized)
    }

    @Test("what each request needs: POST steers (a reload is admin's), anything else reads (or gets 405), the page nothing")
    func needed() {
        #expect(APIRole.needed(method: "GET", segments: ["v1", "status"]) == .read)
        #expect(APIRole.needed(method: "GET", segments: ["metrics"]) == .read)
        #expect(APIRole.needed(method: "GET", segments: ["v1", "events"]) == .read)
        #expect(APIRole.needed(method: "GET", segments: []) == nil)
        #expect(APIRole.needed(method: "POST", segments: ["v1", "folders", "photos", "run"]) == .control)
        #expect(APIRole.needed(method: "POST", segments: ["v1", "pause"]) == .control)
        #expect(APIRole.needed(method: "POST", segments: ["v1", "reload"]) == .admin)
        #expect(APIRole.needed(method: "DELETE", segments: ["v1", "status"]) == .read)
        #expect(APIRole.needed(method: "TRACE", segments: []) == nil)
        #expect(ControlResponder.permits(.read, .read) && !ControlResponder.permits(.read, .control))
        #expect(ControlResponder.permits(.admin, .admin) && !ControlResponder.permits(nil, .read) && ControlResponder.permits(nil, nil))
    }
}
