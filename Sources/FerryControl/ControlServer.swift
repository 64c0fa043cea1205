import FerryConfig
import FerryCore
import FerryDaemon
import FerryPluginAPI
import FerrySystem
import Foundation
import Logging
import NIOCore
import NIOSSL

/// Serves the control API and the status page for the whole life of a daemon process:
/// always on the Unix socket `control.sock` in the state folder (mode 0600), and on
/// `daemon.listen` when set. A reload does not touch it: each request is answered by the
/// runtime that runs then (DaemonControlSlot). Runs until its task is cancelled.
public struct ControlServer: Sendable {
    public let stateDirectory: String
    public let settings: ControlSettings
    public let logger: Logger
    public let metrics: MetricsExporter
    /// Ferry's version, as `/v1/status` reports it.
    public let version: String
    let limits: ControlLimits
    let rates = RateMeter()

    public init(stateDirectory: String, settings: ControlSettings, logger: Logger, metrics: MetricsExporter, version: String) {
        self.version = version
        self.stateDirectory = stateDirectory
        self.settings = settings
        self.logger = logger
        self.metrics = metrics
        self.limits = Self.limitsFromEnvironment()
    }

    public static func socketPath(stateDirectory: String) -> String {
        LocalFileSystem.join(stateDirectory, "control.sock")
    }

    public func serve(_ slot: DaemonControlSlot) async {
        do {
            try LocalFileSystem.makePrivateDirectories(stateDirectory)
        } catch {
            logger.error("cannot serve the control API", metadata: ["error": "\(error)"])
            return
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.serveUnixSocket(slot) }
            if let listen = settings.listen, let address = ListenAddress(listen) {
                group.addTask { await self.serveTCP(slot, address: address) }
            }
            await group.waitForAll()
        }
    }

    func responder(_ slot: DaemonControlSlot, guard requestGuard: RequestGuard, keyring: APIKeyring?) -> ControlResponder {
        ControlResponder(slot: slot, metrics: metrics, version: version, rates: rates, requestGuard: requestGuard,
                         keyring: keyring, limits: limits)
    }

    /// Binds inside a fresh 0700 folder, makes the socket 0600, then renames it into place:
    /// at no moment can another user connect, whatever the state folder's own mode.
    private func serveUnixSocket(_ slot: DaemonControlSlot) async {
        let path = Self.socketPath(stateDirectory: stateDirectory)
        if ControlClient.answers(socket: path) {
            logger.error("another daemon serves this state folder's control socket; not serving it", metadata: ["socket": "\(path)"])
            return
        }
        let staging = LocalFileSystem.join(stateDirectory, ".control-\(CurrentProcess.id)")
        try? FileManager.default.removeItem(atPath: staging)
        do throws(SystemError) {
            try PrivateFile.makeFolder(staging)
        } catch {
            logger.error("cannot serve the control API", metadata: ["error": "\(error)"])
            return
        }
        defer { try? LocalFileSystem.removeDirectory(staging) }
        let bound = LocalFileSystem.join(staging, "control.sock")
        let listener = ControlListener(address: .unixSocket(path: bound), tls: nil, limits: limits,
                                       responder: responder(slot, guard: RequestGuard(transport: .unixSocket), keyring: nil),
                                       logger: logger)
        let logger = self.logger
        do {
            try await listener.run { channel in
                do throws(SystemError) {
                    try PrivateFile.restrict(bound)
                    try LocalFileSystem.rename(bound, to: path)
                } catch {
                    logger.error("cannot serve the control API", metadata: ["error": "cannot put the socket in place: \(error)"])
                    try? await channel.close()
                    return
                }
                try? LocalFileSystem.removeDirectory(staging)
                logger.info("control API on the Unix socket", metadata: ["socket": "\(path)"])
            }
        } catch {
            if !Task.isCancelled { logger.error("the control API on the Unix socket stopped", metadata: ["error": "\(error)"]) }
        }
        try? LocalFileSystem.removeFile(path)
    }

    private func serveTCP(_ slot: DaemonControlSlot, address: ListenAddress) async {
        do {
            // The first key is made now if there is none; others come from `ferry api-key add`.
            let keyring = APIKeyring(stateDirectory: stateDirectory, primaryFile: settings.apiKeyFile)
            _ = try APIKey.load(path: keyring.primaryFile)
            var tls: TLSConfiguration?
            if let certificate = settings.tlsCertificate, let privateKey = settings.tlsKey {
                tls = try ControlListener.tlsConfiguration(certificate: certificate, key: privateKey)
            }
            let requestGuard = RequestGuard(transport: .tcp(port: address.port, tls: tls != nil),
                                            listenHost: address.host, allowedHosts: settings.allowedHosts)
            let host = address.host == "localhost" ? "127.0.0.1" : address.host
            let listener = ControlListener(address: .tcp(host: host, port: address.port), tls: tls, limits: limits,
                                           responder: responder(slot, guard: requestGuard, keyring: keyring), logger: logger)
            let logger = self.logger
            let secure = tls != nil
            try await listener.run { _ in
                logger.info(secure ? "control API on TCP with TLS" : "control API on TCP",
                            metadata: ["address": "\(address.host):\(address.port)"])
            }
        } catch {
            if !Task.isCancelled { logger.error("not serving the control API on TCP", metadata: ["error": "\(error)"]) }
        }
    }

    /// `FERRY_CONTROL_LIMITS=connections=8,idle=2`: smaller limits for tests that reach them.
    static func limitsFromEnvironment() -> ControlLimits {
        var limits = ControlLimits.standard
        guard let text = ProcessInfo.processInfo.environment["FERRY_CONTROL_LIMITS"] else { return limits }
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = Int(parts[1]), value > 0 else { continue }
            switch parts[0] {
            case "connections": limits.connections = value
            case "idle": limits.idle = .seconds(value)
            case "body_time": limits.bodyTime = .seconds(value)
            default: continue
            }
        }
        return limits
    }
}
