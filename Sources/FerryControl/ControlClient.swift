import FerryCore
import FerryPluginAPI
import FerrySystem
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
        let parts = path.split(separator: "?", maxSplits: 1).map(String.init)
        let query = (parts.count > 1 ? parts[1] : "").split(separator: "&").map { pair in
            let field = pair.split(separator: "=", maxSplits: 1).map(String.init)
            return HTTPRequest.QueryItem(name: field[0], value: field.count > 1 ? field[1] : "")
        }
        var request = HTTPRequest(method: HTTPMethod(method), version: .http11, path: parts.first ?? path, query: query,
                                  headers: [.host: "localhost", .contentType: "application/json"], body: Data())
        if let body { request.setBodyData(try JSONSerialization.data(withJSONObject: body)) }
        let response = try await client.sendHTTPRequest(request, to: sockaddr_un.unix(path: socketPath))
        let data = try await response.bodyData
        let object = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
        return (response.statusCode.code, object)
    }

    /// The daemon's events from now on (name and JSON text), read by long polls of
    /// `/v1/events/batch` (whole responses, resumable by id), until the caller stops.
    public func events() -> AsyncThrowingStream<(name: String, json: String), any Error> {
        let client = self
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let (_, start) = try await client.request("GET", "/v1/events/batch")
                    var last = start["last_id"] as? Int ?? 0
                    // The status first: it says what runs now, and that the stream has started.
                    let (_, status) = try await client.request("GET", "/v1/status")
                    let data = try JSONSerialization.data(withJSONObject: status)
                    continuation.yield(("status", String(decoding: data, as: UTF8.self)))
                    while !Task.isCancelled {
                        let (code, batch) = try await client.request("GET", "/v1/events/batch?after=\(last)&wait=20")
                        guard code == 200 else { throw ControlServerError("the daemon answered \(code) to the event poll") }
                        for event in batch["events"] as? [[String: Any]] ?? [] {
                            let text = (event["data"]).flatMap { try? JSONSerialization.data(withJSONObject: $0) }
                            continuation.yield((event["name"] as? String ?? "", text.map { String(decoding: $0, as: UTF8.self) } ?? "{}"))
                        }
                        last = batch["last_id"] as? Int ?? last
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
