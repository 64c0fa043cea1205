import FerryCore
import FerryPluginAPI
import FlyingFox
import FlyingSocks
import Foundation

/// Talks to a running daemon over its Unix socket: `ferry status` reads its status, and
/// `ferry push FOLDER` asks it to run a folder it owns and follows its events.
public struct ControlClient: Sendable {
    public let socketPath: String

    public init(stateDirectory: String) {
        socketPath = ControlServer.socketPath(stateDirectory: stateDirectory)
    }

    /// Whether something accepts connections on the socket (a daemon serves it).
    static func answers(socket path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    /// Whether a daemon serves this state folder's socket now.
    public func isServed() async -> Bool {
        let path = socketPath
        guard (try? LocalFileSystem.metadata(path)) != nil else { return false }
        return await BlockingIO.run { () throws(Never) -> Bool in Self.answers(socket: path) }
    }

    /// GET or POST `path`; the status code and the body parsed as a JSON object.
    public func request(_ method: String, _ path: String, body: [String: Any]? = nil) async throws -> (Int, [String: Any]) {
        var client = HTTPClient()
        var request = HTTPRequest(method: HTTPMethod(method), version: .http11, path: path, query: [],
                                  headers: [.host: "localhost", .contentType: "application/json"], body: Data())
        if let body { request.setBodyData(try JSONSerialization.data(withJSONObject: body)) }
        let response = try await client.sendHTTPRequest(request, to: sockaddr_un.unix(path: socketPath))
        let data = try await response.bodyData
        let object = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
        return (response.statusCode.code, object)
    }

    /// The event stream's events (name and JSON text) as they come, until the daemon
    /// closes it or the caller stops reading.
    public func events() -> AsyncThrowingStream<(name: String, json: String), any Error> {
        let socketPath = self.socketPath
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var client = HTTPClient()
                    let request = HTTPRequest(method: .GET, version: .http11, path: "/v1/events", query: [],
                                              headers: [.host: "localhost", HTTPHeader("Accept"): "text/event-stream"], body: Data())
                    let response = try await client.sendHTTPRequest(request, to: sockaddr_un.unix(path: socketPath))
                    guard case let .httpBody(body) = response.payload else { throw ControlServerError("no event stream") }
                    var parser = ServerSentEventParser()
                    for try await chunk in body {
                        for event in parser.feed(chunk) { continuation.yield((event.name, event.data)) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// Splits an event stream's bytes into events (`event:` and `data:` lines up to a blank line).
struct ServerSentEventParser {
    struct Event: Equatable {
        var id: String?
        var name: String
        var data: String
    }

    private var buffer: [UInt8] = []
    private var current = Event(id: nil, name: "message", data: "")
    private var hasData = false

    mutating func feed(_ bytes: some Sequence<UInt8>) -> [Event] {
        buffer.append(contentsOf: bytes)
        var events: [Event] = []
        while let newline = buffer.firstIndex(of: 10) {
            var line = String(decoding: buffer[..<newline], as: UTF8.self)
            buffer.removeSubrange(...newline)
            if line.hasSuffix("\r") { line.removeLast() }
            if line.isEmpty {
                if hasData { events.append(current) }
                current = Event(id: nil, name: "message", data: "")
                hasData = false
                continue
            }
            if line.hasPrefix(":") { continue }
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let field = String(parts[0])
            var value = parts.count > 1 ? String(parts[1]) : ""
            if value.hasPrefix(" ") { value.removeFirst() }
            switch field {
            case "event": current.name = value
            case "id": current.id = value
            case "data":
                current.data += hasData ? "\n" + value : value
                hasData = true
            default: break
            }
        }
        return events
    }
}
