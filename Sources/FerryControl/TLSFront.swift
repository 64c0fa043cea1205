internal import COpenSSL
import FerryCore
import FerryPluginAPI
import FerrySystem
import FlyingFox
import FlyingSocks
import Foundation
import Logging

/// HTTPS for the control API: OpenSSL (through the `COpenSSL` shim) accepts TLS
/// connections on `daemon.listen` and pumps their plaintext to an HTTP server on a private
/// Unix socket, which checks every request as TCP with TLS (key, Host, `https://` Origin).
/// A connection is served on a thread of its own (blocking calls never on the pool).
struct TLSFront: Sendable {
    let address: ListenAddress
    let certificate: String
    let privateKey: String
    let stateDirectory: String
    let handler: ControlHandler
    let logger: Logger

    /// OpenSSL's server context. Safe to share: after setup it is only read, and
    /// OpenSSL documents `SSL_new` on one context from many threads as thread-safe.
    final class Context: @unchecked Sendable {
        let pointer: OpaquePointer

        init(certificate: String, key: String) throws {
            var error = [CChar](repeating: 0, count: 512)
            guard let pointer = COpenSSL_server_context(certificate, key, &error, error.count) else {
                throw ControlServerError(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            self.pointer = pointer
        }

        deinit { COpenSSL_free_context(pointer) }
    }

    func run() async throws {
        let context = try Context(certificate: certificate, key: privateKey)
        // The plaintext side: an HTTP server only this process can reach.
        let staging = LocalFileSystem.join(stateDirectory, ".control-tls-\(getpid())")
        try? FileManager.default.removeItem(atPath: staging)
        guard mkdir(staging, 0o700) == 0 else { throw ControlServerError("cannot make \(staging)") }
        defer { try? FileManager.default.removeItem(atPath: staging) }
        let inner = LocalFileSystem.join(staging, "https.sock")
        let server = await ControlServer.server(address: .unix(path: inner), handler: handler)
        let serving = Task { try await server.run() }
        defer { serving.cancel() }
        try await server.waitUntilListening(timeout: 30)

        var error = [CChar](repeating: 0, count: 512)
        let listening = COpenSSL_listen(address.host, Int32(address.port), &error, error.count)
        guard listening >= 0 else {
            throw ControlServerError(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        logger.info("control API on TCP with TLS", metadata: ["address": "\(address.host):\(address.port)"])
        let connections = AsyncStream<Int32> { continuation in
            Thread.detachNewThread {
                while true {
                    let client = COpenSSL_accept(listening)
                    if client < 0 { break }
                    continuation.yield(client)
                }
                // Closed here, not by the stop: see COpenSSL_stop_listening.
                close(listening)
                continuation.finish()
            }
        }
        await withTaskCancellationHandler {
            for await client in connections {
                Thread.detachNewThread {
                    let upstream = COpenSSL_connect_unix(inner)
                    guard upstream >= 0 else {
                        close(client)
                        return
                    }
                    COpenSSL_serve(context.pointer, client, upstream)
                }
            }
        } onCancel: {
            COpenSSL_stop_listening(listening)
        }
    }
}
