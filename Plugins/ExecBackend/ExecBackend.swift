import FerryPluginAPI
import FerrySystem
import Foundation
import Logging
import Synchronization

/// A backend served by an external program, `ferry-backend-NAME`, that speaks the plugin
/// protocol (docs/plugin-protocol.md) over its stdin and stdout.
///
/// One process serves all of a backend's requests, several at a time (as many as its
/// handshake allows); `PluginSupervisor` restarts it when it fails. What the plugin
/// reports is checked before the core sees it: paths are validated, listings must hold
/// children of the folder listed, a download must leave the partial file at the size the
/// plugin claims. Every failure of the plugin itself is a retryable error.
public final class ExecBackend: Backend {
    public let name: String
    public let executable: String
    let supervisor: PluginSupervisor
    private let learnt = Mutex(BackendCapabilities())

    public struct Settings: Sendable {
        public var remoteName: String
        /// What the plugin gets in its `welcome`.
        public var options: [String: String]
        public var stallTimeout: Duration
        /// At most this many requests at once, below the plugin's own limit.
        public var concurrency: Int?
        /// The plugin process's whole environment (`PluginEnvironment`).
        public var environment: [String: String]

        public init(remoteName: String, options: [String: String] = [:], stallTimeout: Duration = .seconds(60),
                    concurrency: Int? = nil,
                    environment: [String: String] = PluginEnvironment.base(from: ProcessInfo.processInfo.environment)) {
            self.remoteName = remoteName
            self.options = options
            self.stallTimeout = stallTimeout
            self.concurrency = concurrency
            self.environment = environment
        }
    }

    public init(name: String, executable: String, settings: Settings, backoff: RestartBackoff = RestartBackoff()) {
        self.name = name
        self.executable = executable
        let launch = PluginConnection.Launch(
            executable: executable, remoteName: settings.remoteName, options: settings.options,
            stallTimeout: settings.stallTimeout, environment: settings.environment, logger: Logger(label: "ferry.plugin.\(name)"))
        supervisor = PluginSupervisor(launch: launch, backoff: backoff, concurrencyCap: settings.concurrency)
    }

    deinit {
        let supervisor = self.supervisor
        Task { await supervisor.shutDown() }
    }

    /// What the plugin said in its last handshake; nothing before the first request (use
    /// `discoverCapabilities`).
    public var capabilities: BackendCapabilities { Self.supported(learnt.withLock { $0 }) }
    public var displayName: String { "exec:\(name)" }

    /// How many times the plugin process was started again after a failure.
    public var restarts: Int {
        get async { await supervisor.restarts }
    }

    public func discoverCapabilities() async throws(BackendError) -> BackendCapabilities {
        let hello = try await supervisor.hello()
        learnt.withLock { $0 = hello.capabilities }
        return Self.supported(hello.capabilities)
    }

    /// A plugin's claims less what the wire protocol has no request for: a ranged read.
    static func supported(_ claimed: BackendCapabilities) -> BackendCapabilities {
        var capabilities = claimed
        capabilities.rangedRead = false
        return capabilities
    }

    /// The plugin's hello: name, version, protocol versions, capabilities, concurrency.
    public func pluginHello() async throws(BackendError) -> PluginHello {
        try await supervisor.hello()
    }

    // MARK: Operations

    public func list(_ directory: RelativePath) async throws(BackendError) -> [RemoteEntry] {
        var request = PluginRequest(id: 0, op: "list")
        request.path = directory.string
        let reply = try await perform(request, path: directory.description)
        var entries: [RemoteEntry] = []
        for item in reply.entries ?? [] {
            let entry = try item.remoteEntry()
            guard entry.path.parent == directory else {
                throw BackendError(.protocolViolation, "\(displayName) listed '\(item.path)' as a child of '\(directory)'",
                                   path: directory.description, retryable: true)
            }
            if !TemporaryName.isTemporary(entry.path.name) { entries.append(entry) }
        }
        return entries.sorted { $0.path < $1.path }
    }

    public func stat(_ path: RelativePath) async throws(BackendError) -> RemoteEntry? {
        var request = PluginRequest(id: 0, op: "stat")
        request.path = path.string
        let reply = try await perform(request, path: path.description)
        guard let item = reply.entry else { return nil }
        return try checked(item, is: path)
    }

    public func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        let source = request.source
        // Refused here already, so a plugin that forgets to check never stores a file
        // that is not the version the core planned.
        let meta = try await BlockingIO.run { () throws(BackendError) in try BackendError.catching { try LocalFileSystem.metadata(source) } }
        guard let meta, meta.kind == .file, meta.size == request.size, meta.modifiedNanos == request.modifiedNanos else {
            throw BackendError(.changedDuringTransfer, "source changed since it was scanned", path: source)
        }
        var wire = PluginRequest(id: 0, op: "upload")
        wire.path = request.destination.string
        wire.source = source
        wire.size = request.size
        wire.modifiedNanos = request.modifiedNanos
        wire.resume = request.mayResume
        if request.expectsNewFile { wire.newFile = true }
        let reply = try await perform(wire, path: request.destination.description, observer: observer)
        guard let item = reply.entry else {
            throw BackendError(.protocolViolation, "\(displayName) did not say what it stored", path: request.destination.description,
                               retryable: true)
        }
        let entry = try checked(item, is: request.destination)
        let resumedFrom = reply.resumedFrom ?? 0
        guard entry.size == request.size, (0...request.size).contains(resumedFrom) else {
            throw BackendError(.protocolViolation,
                               "\(displayName) stored \(entry.size) bytes (resumed at \(resumedFrom)) of a \(request.size)-byte file",
                               path: request.destination.description, retryable: true)
        }
        Self.account(observer, total: request.size - resumedFrom, reported: reply.reportedBytes)
        return UploadResult(entry: entry, bytesSent: request.size - resumedFrom, resumedFrom: resumedFrom)
    }

    public func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        var wire = PluginRequest(id: 0, op: "download")
        wire.path = request.source.string
        wire.target = request.partialFile
        wire.offset = request.offset
        wire.expected = WireEntry(request.expected)
        let sent = wire
        let reply = try await withinListedSize(partialFile: request.partialFile, listedSize: request.expected.size,
                                               path: request.source.description) { () async throws(BackendError) in
            try await self.perform(sent, path: request.source.description, observer: observer)
        }
        guard let item = reply.entry else {
            throw BackendError(.protocolViolation, "\(displayName) did not say what it read", path: request.source.description,
                               retryable: true)
        }
        let entry = try checked(item, is: request.source)
        let resumedFrom = reply.resumedFrom ?? 0
        let partial = request.partialFile
        let written = try await BlockingIO.run { () throws(BackendError) in try BackendError.catching { try LocalFileSystem.metadata(partial) } }
        guard let written, written.size == entry.size, (0...entry.size).contains(resumedFrom), resumedFrom <= request.offset else {
            throw BackendError(.protocolViolation,
                               "\(displayName) left \(written?.size ?? 0) bytes in the partial file of a \(entry.size)-byte file",
                               path: request.source.description, retryable: true)
        }
        Self.account(observer, total: entry.size - resumedFrom, reported: reply.reportedBytes)
        return DownloadResult(entry: entry, bytesReceived: entry.size - resumedFrom, resumedFrom: resumedFrom)
    }

    public func makeDirectory(_ path: RelativePath) async throws(BackendError) {
        var request = PluginRequest(id: 0, op: "mkdir")
        request.path = path.string
        _ = try await perform(request, path: path.description)
    }

    public func move(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        guard try await discoverCapabilities().serverSideMove else {
            throw BackendError(.unsupported, "\(displayName) cannot move files on the server", path: source.description)
        }
        var request = PluginRequest(id: 0, op: "move")
        request.from = source.string
        request.to = destination.string
        request.overwrite = overwrite
        _ = try await perform(request, path: source.description)
    }

    public func copy(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        guard try await discoverCapabilities().serverSideCopy else {
            throw BackendError(.unsupported, "\(displayName) cannot copy files on the server", path: source.description)
        }
        var request = PluginRequest(id: 0, op: "copy")
        request.from = source.string
        request.to = destination.string
        request.overwrite = overwrite
        _ = try await perform(request, path: source.description)
    }

    public func delete(_ path: RelativePath) async throws(BackendError) {
        var request = PluginRequest(id: 0, op: "delete")
        request.path = path.string
        _ = try await perform(request, path: path.description)
    }

    /// Starts the plugin when it is not running, and asks it about the root: any answer
    /// shows it works.
    public func checkReachable() async throws(BackendError) {
        do {
            _ = try await stat(.root)
        } catch where !error.suggestsOutage && error.code != .protocolViolation {
            return
        }
    }

    // MARK: Plumbing

    /// How often a download's partial file is looked at while a plugin writes it.
    static let partialFileCheck = Duration.milliseconds(200)

    /// Runs a download while watching the partial file the plugin writes: one that grows
    /// past the listed size is stopped at once (the request is cancelled, which the plugin
    /// is told), so that a lying plugin cannot fill the disk past `min_free_space`. The
    /// core removes what it wrote and the file is retried, as for an HTTP body that runs
    /// past its length.
    private func withinListedSize(partialFile: String, listedSize: Int64, path: String,
                                  _ body: @escaping @Sendable () async throws(BackendError) -> PluginMessage)
        async throws(BackendError) -> PluginMessage {
        let outcome = await withTaskGroup(of: Result<PluginMessage, BackendError>?.self) { group in
            group.addTask {
                do throws(BackendError) { return .success(try await body()) } catch { return .failure(error) }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: Self.partialFileCheck)
                    let size = try? await BlockingIO.run { () throws(BackendError) in
                        try BackendError.catching { try LocalFileSystem.metadata(partialFile)?.size }
                    }
                    if let size = size ?? nil, size > listedSize {
                        return .failure(BackendError(.changedDuringTransfer,
                                                     "the plugin wrote \(size) bytes of a file listed as \(listedSize); stopped",
                                                     path: path, retryable: true))
                    }
                }
                return nil
            }
            for await result in group {
                if let result {
                    group.cancelAll()
                    return result
                }
            }
            return .failure(BackendError(.cancelled, "the download was cancelled", path: path))
        }
        return try outcome.get()
    }

    /// Sends one request within the concurrency limit; a reply with `ok: false` becomes
    /// the error it carries.
    private func perform(_ request: PluginRequest, path: String, observer: (any TransferObserver)? = nil)
        async throws(BackendError) -> PluginMessage {
        let limit = supervisor.limit
        await limit.acquire()
        let outcome: Result<PluginMessage, BackendError>
        do throws(BackendError) {
            let connection = try await supervisor.connection()
            if let hello = await connection.hello { learnt.withLock { $0 = hello.capabilities } }
            let reply = try await connection.call(request, observer: observer)
            await supervisor.succeeded()
            outcome = .success(reply)
        } catch {
            outcome = .failure(error)
        }
        await limit.release()
        switch outcome {
        case let .success(reply):
            if reply.ok == true { return reply }
            throw (reply.error ?? WireError(code: nil, errorClass: nil, message: nil))
                .backendError(plugin: displayName, operation: request.op, path: path)
        case var .failure(error):
            if error.path == nil { error.path = path }
            throw error
        }
    }

    /// The entry a plugin gave for `path`, checked to be that path.
    private func checked(_ item: WireEntry, is path: RelativePath) throws(BackendError) -> RemoteEntry {
        let entry = try item.remoteEntry()
        guard entry.path == path else {
            throw BackendError(.protocolViolation, "\(displayName) answered about '\(item.path)' when asked about '\(path)'",
                               path: path.description, retryable: true)
        }
        return entry
    }

    /// Counts the bytes a plugin moved but did not report in progress messages (small
    /// files usually get none), so the run's totals add up.
    private static func account(_ observer: any TransferObserver, total: Int64, reported: Int64) {
        if total > reported { _ = observer.bytesTransferred(Int(total - reported)) }
    }
}
