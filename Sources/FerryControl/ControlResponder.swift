import FerryCore
import FerryDaemon
import FerrySystem
import Foundation
import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore

/// Turns one server request into an API request and its answer back into bytes: the guard
/// first (key, Host, Origin), then the body within its limit, then the runtime that runs
/// now. A body that is refused or never read closes the connection, so a large upload is
/// not read through only to be thrown away.
struct ControlResponder: Sendable {
    let slot: DaemonControlSlot
    let metrics: MetricsExporter
    let version: String
    let rates: RateMeter
    let requestGuard: RequestGuard
    /// The keys a TCP request may carry, read for each request; nil on the Unix socket.
    let keyring: APIKeyring?
    let limits: ControlLimits

    /// How long a request waits for the next runtime during a reload before it gets 503.
    static let reloadWait: Duration = .seconds(15)

    func respond(_ request: Request, writer: consuming ResponseWriter, channel: any Channel) async throws {
        var request = request
        var headers: [String: String] = [:]
        for field in request.headers {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { $0 + ", " + field.value } ?? field.value
        }
        // HTTP/1's Host travels as the request's authority in HTTPTypes.
        if let authority = request.head.authority { headers["host"] = authority }
        let path = request.uri.path
        let declaresBody = headers["transfer-encoding"] != nil || (headers["content-length"].map { $0 != "0" } ?? false)
        var bodyRead = false
        let response: APIResponse
        let keys = keyring?.keys().keys.map { RequestGuard.AcceptedKey(name: $0.name, role: $0.role, secret: $0.secret) } ?? []
        let apiRequest = APIRequest(method: request.method.rawValue, path: path, query: Self.query(request.uri.query),
                                    headers: headers)
        let needed = APIRole.needed(method: apiRequest.method, segments: apiRequest.segments)
        switch requestGuard.decide(path: path, headers: headers, keys: keys) {
        case let .unauthorized(message):
            var refusal = APIResponse.error(401, message)
            refusal.headers.append(("WWW-Authenticate", "Bearer"))
            response = refusal
        case let .forbidden(message):
            response = APIResponse.error(403, message)
        case let .allow(role, keyName) where !Self.permits(role, needed):
            let who = keyName.map { "the key \($0) has the role \(role?.rawValue ?? "none")" } ?? "no key was given"
            response = APIResponse.error(403, "\(who); \(apiRequest.method) \(path) needs the role \(needed?.rawValue ?? "")")
        case let .allow(role, keyName):
            var body: [UInt8] = []
            var refusal: APIResponse?
            if declaresBody {
                if let length = headers["content-length"].flatMap(Int.init), length > limits.body {
                    refusal = Self.tooLarge(limits)
                } else {
                    // A body that trickles in is cut off with the connection.
                    let clock = slot.clock
                    let deadline = Task {
                        await clock.sleep(for: limits.bodyTime)
                        guard !Task.isCancelled else { return }
                        channel.close(promise: nil)
                    }
                    do {
                        let buffer = try await request.collectBody(upTo: limits.body)
                        body = Array(buffer.readableBytesView)
                        bodyRead = true
                    } catch {
                        refusal = Self.tooLarge(limits)
                    }
                    deadline.cancel()
                }
            }
            if let refusal {
                response = refusal
            } else if let control = await slot.current(waitingUpTo: Self.reloadWait) {
                let api = ControlAPI(control: control, metrics: metrics, version: version, rates: rates, slot: slot)
                var complete = apiRequest
                complete.body = body
                complete.role = role
                complete.keyName = keyName
                response = await api.respond(to: complete)
            } else {
                response = APIResponse.error(503, "the daemon is stopping")
            }
        }
        let closes = declaresBody && !bodyRead
        var answer = response
        if closes { answer.headers.append(("Connection", "close")) }
        try await Self.write(answer, to: writer)
        if closes { channel.close(promise: nil) }
    }

    /// Whether `role` (nil: no key) may make a request that needs `needed` (nil: none).
    static func permits(_ role: APIRole?, _ needed: APIRole?) -> Bool {
        guard let needed else { return true }
        guard let role else { return false }
        return role >= needed
    }

    static func tooLarge(_ limits: ControlLimits) -> APIResponse {
        APIResponse.error(413, "the request's body is over \(limits.body / 1024) KiB; the API takes small JSON objects only")
    }

    static func write(_ response: APIResponse, to writer: consuming ResponseWriter) async throws {
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
        }
        let head = HTTPResponse(status: .init(code: response.status), headerFields: fields)
        switch response.body {
        case let .bytes(bytes):
            var head = head
            head.headerFields[.contentLength] = "\(bytes.count)"
            try await writer.write(response: head, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        case let .stream(chunks):
            // Each chunk is written once the connection takes it: a slow client slows the
            // stream, whose own buffer then cuts it off (EventStream).
            var body = try await writer.writeHead(head)
            for await chunk in chunks {
                try await body.write(ByteBuffer(bytes: chunk))
            }
            try await body.finish(nil)
        }
    }

    /// `a=1&b=x%20y` → decoded pairs; the first of a repeated name wins.
    static func query(_ text: String?) -> [String: String] {
        var query: [String: String] = [:]
        for pair in (text ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            if query[name] == nil { query[name] = value }
        }
        return query
    }
}
