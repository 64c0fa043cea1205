import FerryCore
import FerryPluginAPI
import FerrySystem
import FlyingFox
import FlyingSocks
import Foundation
import Logging

/// Serves the control API and the status page for a running daemon: always on the Unix
/// socket `control.sock` in the state folder (mode 0600), and on `daemon.listen` when set.
/// Runs until its task is cancelled.
public struct ControlServer: Sendable {
    public let stateDirectory: String
    public let settings: ControlSettings
    public let logger: Logger
    public let metrics: MetricsExporter
    /// Ferry's version, as `/v1/status` reports it.
    public let version: String

    public init(stateDirectory: String, settings: ControlSettings, logger: Logger, metrics: MetricsExporter, version: String) {
        self.version = version
        self.stateDirectory = stateDirectory
        self.settings = settings
        self.logger = logger
        self.metrics = metrics
    }

    public static func socketPath(stateDirectory: String) -> String {
        LocalFileSystem.join(stateDirectory, "control.sock")
    }

    public func serve(_ control: DaemonControl) async {
        let api = ControlAPI(control: control, metrics: metrics, version: version)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.serveUnixSocket(api) }
            if let listen = settings.listen, let address = ListenAddress(listen) {
                group.addTask { await self.serveTCP(api, address: address) }
            }
            await group.waitForAll()
        }
        control.events.close()
    }

    /// Binds inside a fresh 0700 folder, makes the socket 0600, then renames it into place:
    /// at no moment can another user connect, whatever the state folder's own mode.
    private func serveUnixSocket(_ api: ControlAPI) async {
        let path = Self.socketPath(stateDirectory: stateDirectory)
        if ControlClient.answers(socket: path) {
            logger.error("another daemon serves this state folder's control socket; not serving it", metadata: ["socket": "\(path)"])
            return
        }
        let staging = LocalFileSystem.join(stateDirectory, ".control-\(getpid())")
        try? FileManager.default.removeItem(atPath: staging)
        guard mkdir(staging, 0o700) == 0 else {
            logger.error("cannot serve the control API", metadata: ["error": "mkdir \(staging): \(String(cString: strerror(errno)))"])
            return
        }
        defer { rmdir(staging) }
        let bound = LocalFileSystem.join(staging, "control.sock")
        let handler = ControlHandler(api: api, guard: RequestGuard(transport: .unixSocket, apiKey: ""), logger: logger)
        let server = await Self.server(address: .unix(path: bound), handler: handler)
        let task = Task { try await server.run() }
        do {
            try await server.waitUntilListening(timeout: 30)
            guard chmod(bound, 0o600) == 0, rename(bound, path) == 0 else {
                throw ControlServerError("cannot put the socket in place: \(String(cString: strerror(errno)))")
            }
            rmdir(staging)
            logger.info("control API on the Unix socket", metadata: ["socket": "\(path)"])
        } catch {
            logger.error("cannot serve the control API", metadata: ["error": "\(error)"])
            task.cancel()
            return
        }
        await withTaskCancellationHandler {
            _ = await task.result
        } onCancel: {
            task.cancel()
        }
        unlink(path)
    }

    private func serveTCP(_ api: ControlAPI, address: ListenAddress) async {
        let key: String
        do {
            key = try APIKey.load(path: settings.apiKeyFile ?? APIKey.defaultPath(stateDirectory: stateDirectory))
        } catch {
            logger.error("not serving the control API on TCP", metadata: ["error": "\(error)"])
            return
        }
        let tls = settings.tlsCertificate != nil
        let guardian = RequestGuard(transport: .tcp(port: address.port, tls: tls), apiKey: key,
                                    listenHost: address.host, allowedHosts: settings.allowedHosts)
        let handler = ControlHandler(api: api, guard: guardian, logger: logger)
        do {
            if let certificate = settings.tlsCertificate, let privateKey = settings.tlsKey {
                // TLS ends in a terminator in front of a server on a private Unix socket.
                try await TLSFront(address: address, certificate: certificate, privateKey: privateKey,
                                   stateDirectory: stateDirectory, handler: handler, logger: logger).run()
            } else {
                let socketAddress: any SocketAddress = address.host.contains(":")
                    ? try sockaddr_in6.inet6(ip6: address.host, port: UInt16(address.port))
                    : try sockaddr_in.inet(ip4: address.host == "localhost" ? "127.0.0.1" : address.host, port: UInt16(address.port))
                let server = await Self.server(address: socketAddress, handler: handler)
                logger.info("control API on TCP", metadata: ["address": "\(address.host):\(address.port)"])
                try await server.run()
            }
        } catch is CancellationError {
        } catch {
            if !Task.isCancelled {
                logger.error("the control API on TCP stopped", metadata: ["error": "\(error)"])
            }
        }
    }
}

extension ControlServer {
    /// A server that hands every request to `handler`: FlyingFox's catch-all route takes
    /// the nine classic methods only, so newer ones (QUERY) get a route too, and are
    /// answered 405 like any method a resource does not take.
    static func server(address: some SocketAddress, handler: ControlHandler) async -> HTTPServer {
        let server = HTTPServer(address: address, timeout: 60, logger: .disabled, handler: handler)
        await server.appendRoute("QUERY *", to: handler)
        return server
    }
}

/// Checks each request with the guard, then hands it to the API.
struct ControlHandler: HTTPHandler {
    let api: ControlAPI
    let `guard`: RequestGuard
    let logger: Logger

    func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
        var headers: [String: String] = [:]
        for (name, value) in request.headers { headers[name.rawValue.lowercased()] = value }
        switch self.guard.decide(path: request.path, headers: headers) {
        case .allow:
            return await api.respond(to: request, headers: headers)
        case let .unauthorized(message):
            var response = APIResponse.error(401, message)
            response.headers[HTTPHeader("WWW-Authenticate")] = "Bearer"
            return response
        case let .forbidden(message):
            return APIResponse.error(403, message)
        }
    }
}
