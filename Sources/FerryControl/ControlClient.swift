import FerryCore
import FerryPluginAPI
import FerrySystem
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

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

    /// An answer larger than this is a daemon gone wrong, not one to read on.
    static let answerLimit = 16 * 1024 * 1024

    /// GET or POST `path`; the status code and the body parsed as a JSON object.
    public func request(_ method: String, _ path: String, body: [String: Any]? = nil) async throws -> (Int, [String: Any]) {
        let payload = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(unixDomainSocketPath: socketPath) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
        let (status, answer) = try await channel.executeThenClose { inbound, outbound in
            var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path)
            head.headers.add(name: "Host", value: "localhost")
            head.headers.add(name: "Content-Type", value: "application/json")
            head.headers.add(name: "Content-Length", value: "\(payload.count)")
            head.headers.add(name: "Connection", value: "close")
            try await outbound.write(.head(head))
            if !payload.isEmpty { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: payload)))) }
            try await outbound.write(.end(nil))
            var status = 0
            var answer = ByteBuffer()
            for try await part in inbound {
                switch part {
                case let .head(response):
                    status = Int(response.status.code)
                case var .body(chunk):
                    guard answer.readableBytes + chunk.readableBytes <= Self.answerLimit else {
                        throw ControlServerError("the daemon's answer to \(path) is over \(Self.answerLimit / 1024 / 1024) MiB")
                    }
                    answer.writeBuffer(&chunk)
                case .end:
                    return (status, answer)
                }
            }
            throw ControlServerError("the daemon closed the connection before answering \(path)")
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(answer.readableBytesView)) as? [String: Any]) ?? [:]
        return (status, object)
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
