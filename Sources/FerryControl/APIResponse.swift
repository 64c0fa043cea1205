import FerryCore
import Foundation

/// A request as the API sees it, whichever server or transport brought it.
struct APIRequest: Sendable {
    /// Upper case.
    var method: String
    /// The path as sent (percent-encoded), without the query.
    var path: String
    /// The path's segments, percent-decoded.
    var segments: [String]
    /// Decoded query parameters; the first of a repeated name wins.
    var query: [String: String]
    /// By lower-case name.
    var headers: [String: String]
    /// The body, already read within the server's limit (empty for a GET).
    var body: [UInt8] = []
    /// What the request may do (admin on the Unix socket), and the key's name over TCP.
    var role: APIRole? = .admin
    var keyName: String?

    init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = []) {
        self.method = method.uppercased()
        self.path = path
        self.segments = path.split(separator: "/", omittingEmptySubsequences: true).map { segment in
            String(segment).removingPercentEncoding ?? String(segment)
        }
        self.query = query
        self.headers = headers
        self.body = body
    }
}

/// An answer: a status, headers, and either bytes or a stream of chunks (the event stream),
/// which the server sends as they come, waiting for the client to take each.
struct APIResponse: Sendable {
    enum Body: Sendable {
        case bytes([UInt8])
        case stream(AsyncStream<[UInt8]>)
    }

    var status: Int
    var headers: [(String, String)]
    var body: Body

    init(status: Int, headers: [(String, String)] = [], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    static func json(_ object: JSONObject, status: Int = 200) -> APIResponse {
        APIResponse(status: status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                    body: .bytes(Array(object.text.utf8)))
    }

    /// The one error shape: `{"error": "what to do"}`.
    static func error(_ status: Int, _ message: String) -> APIResponse {
        var object = JSONObject()
        object.add("error", message)
        return json(object, status: status)
    }

    static func text(_ text: String, contentType: String, status: Int = 200) -> APIResponse {
        APIResponse(status: status, headers: [("Content-Type", contentType), ("Cache-Control", "no-store")],
                    body: .bytes(Array(text.utf8)))
    }
}
