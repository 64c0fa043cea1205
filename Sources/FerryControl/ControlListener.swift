import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// One address the control API listens on: an HTTP/1.1 server from HummingbirdCore on
/// swift-nio's shared event loops (no thread per connection), with the decoder's limits,
/// an idle timeout, the connection cap, and TLS when asked. Runs until its task is cancelled.
struct ControlListener: Sendable {
    enum Address: Sendable {
        case unixSocket(path: String)
        case tcp(host: String, port: Int)
    }

    let address: Address
    let tls: TLSConfiguration?
    let limits: ControlLimits
    let responder: ControlResponder
    let logger: Logger

    /// `listening` runs once the socket is bound, before the first connection is taken.
    func run(listening: @escaping @Sendable (any Channel) async -> Void = { _ in }) async throws {
        let gate = ConnectionGate(capacity: limits.connections)
        let limits = self.limits
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ConnectionLimitHandler(gate: gate, headLimit: limits.head)],
            idleTimeout: .seconds(limits.idle.components.seconds),
            httpDecoderConfiguration: .init(maxHeaderFieldSize: limits.head, maxHeaderListSize: limits.head,
                                            maxHeaderFieldCount: limits.headerFields))
        var builder = HTTPServerBuilder.http1(configuration: http1)
        if let tls { builder = try .tls(builder, tlsConfiguration: tls) }
        let bind: BindAddress
        switch address {
        case let .unixSocket(path): bind = .unixDomainSocket(path: path)
        case let .tcp(host, port): bind = .hostname(host, port: port)
        }
        // HummingbirdCore's own lines (one per start, one per failed connection) are noise
        // at the daemon's levels; its errors still come through.
        let serverLogger = ServerLogFilter.logger(from: logger)
        let responder = self.responder
        let server = try builder.buildServer(
            configuration: ServerConfiguration(address: bind, backlog: 256),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: serverLogger,
            responder: { request, writer, channel in
                try await responder.respond(request, writer: writer, channel: channel)
            },
            onServerRunning: listening)
        try await server.run()
    }

    /// The server side of TLS from PEM files: the certificate chain and its private key.
    static func tlsConfiguration(certificate: String, key: String) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificate)
        } catch {
            throw ControlServerError("cannot read the TLS certificate \(certificate): \(error); give a PEM file in daemon.tls_certificate")
        }
        guard !chain.isEmpty else { throw ControlServerError("no certificate in \(certificate); give a PEM file in daemon.tls_certificate") }
        let privateKey: NIOSSLPrivateKey
        do {
            privateKey = try NIOSSLPrivateKey(file: key, format: .pem)
        } catch {
            throw ControlServerError("cannot read the TLS key \(key): \(error); give a PEM private key in daemon.tls_key")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) },
                                                                     privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }
}
