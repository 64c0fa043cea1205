import FerryPluginAPI
import Foundation
import Logging

/// One running plugin process and the conversation with it: the handshake, requests
/// multiplexed by id, progress routed to each transfer's observer, and a watchdog.
///
/// Every way the plugin can misbehave ends here in one place (`fail`): it exits or is
/// killed (its stdout closes), writes a line that is not a protocol message, or goes
/// silent. The process is then killed, and every request still waiting gets the same
/// retryable error naming what happened, with the plugin's last words on stderr. A
/// connection that failed stays failed; `PluginSupervisor` starts a new one.
actor PluginConnection {
    /// How the process is started and what it is told in the handshake.
    struct Launch: Sendable {
        var executable: String
        var remoteName: String
        var options: [String: String]
        /// A request that hears nothing (no reply, no progress) for this long fails, and a
        /// plugin that says nothing at all for this long is killed.
        var stallTimeout: Duration
        /// The process's whole environment (`PluginEnvironment`), never Ferry's own.
        var environment: [String: String]
        var logger: Logger

        var pluginName: String { (executable as NSString).lastPathComponent }
    }

    private struct Pending {
        var operation: String
        var continuation: CheckedContinuation<Result<PluginMessage, BackendError>, Never>
        var observer: (any TransferObserver)?
        var reportedBytes: Int64 = 0
        var lastActivity: ContinuousClock.Instant
        /// How long it may go without a word: the stall timeout, and at least
        /// `handshakeTimeout` for the handshake (an interpreter can be slow to start on a
        /// busy machine).
        var limit: Duration
        var cancelSent = false
    }

    static let handshakeTimeout: Duration = .seconds(30)

    /// The hello is awaited like a reply to a request with this id.
    private static let helloId = -1

    let launch: Launch
    private let process: PluginProcess
    private let writer: PipeWriter
    private let reader: PipeLineReader
    private let errorReader: PipeLineReader
    private let clock = ContinuousClock()

    private(set) var hello: PluginHello?
    private(set) var version = 0
    private var pending: [Int: Pending] = [:]
    private var nextId = 1
    private var failure: BackendError?
    private var lastHeard: ContinuousClock.Instant
    /// Lines of stdout taken from the reader so far; fewer than it produced means the
    /// plugin spoke and this actor has not caught up yet.
    private var linesTaken = 0
    private var lastErrorLines: [String] = []
    private var errorOutputEnded = false

    private init(launch: Launch, process: PluginProcess) {
        self.launch = launch
        self.process = process
        let name = launch.pluginName
        writer = PipeWriter(descriptor: process.input, name: "ferry-plugin-in \(name)")
        reader = PipeLineReader(descriptor: process.output, maxLineBytes: PluginWireFormat.maxLineBytes,
                                name: "ferry-plugin-out \(name)")
        errorReader = PipeLineReader(descriptor: process.errorOutput, maxLineBytes: 1 << 20,
                                     name: "ferry-plugin-err \(name)")
        lastHeard = ContinuousClock().now
    }

    /// Starts the plugin, reads its hello, agrees on a version and hands it the remote's
    /// options. Throws when any step fails; the process is gone then.
    static func start(_ launch: Launch) async throws(BackendError) -> PluginConnection {
        let process = try PluginProcess.spawn(launch.executable, environment: launch.environment)
        let connection = PluginConnection(launch: launch, process: process)
        try await connection.handshake()
        return connection
    }

    /// Starts the plugin only to read its hello, then lets it go (for `ferry plugins`).
    static func introduce(_ launch: Launch) async throws(BackendError) -> PluginHello {
        let process = try PluginProcess.spawn(launch.executable, environment: launch.environment)
        let connection = PluginConnection(launch: launch, process: process)
        do throws(BackendError) {
            let message = try await connection.waitForHello()
            await connection.close()
            return try PluginHello(message, fallbackName: launch.pluginName)
        } catch {
            await connection.close()
            throw error
        }
    }

    var isAlive: Bool { failure == nil }

    private func startTasks() {
        // Each line is released once handled: the readers hold back the rest (a plugin
        // that floods lines waits on its full pipe).
        let reader = self.reader
        let lines = reader.lines
        Task { [self] in
            for await event in lines {
                await received(event)
                reader.release(event)
            }
        }
        let errorReader = self.errorReader
        let errorLines = errorReader.lines
        Task { [self] in
            for await event in errorLines {
                receivedError(event)
                errorReader.release(event)
            }
        }
        let tick = min(launch.stallTimeout / 4, .seconds(1))
        Task { [self] in
            while isAlive {
                try? await Task.sleep(for: tick)
                checkForStalls()
            }
        }
    }

    /// Starts reading only once the hello is awaited, so it cannot arrive unawaited.
    private func waitForHello() async throws(BackendError) -> PluginMessage {
        try await wait(for: Self.helloId, operation: "hello", observer: nil) { startTasks() }
    }

    private func handshake() async throws(BackendError) {
        let message = try await waitForHello()
        let hello = try PluginHello(message, fallbackName: launch.pluginName)
        guard let version = PluginWireFormat.negotiate(hello.protocolVersions) else {
            let error = BackendError(
                .unsupported,
                "\(launch.pluginName) speaks plugin protocol \(hello.protocolVersions.lowerBound)–\(hello.protocolVersions.upperBound); "
                    + "this Ferry speaks \(PluginWireFormat.versions.lowerBound)–\(PluginWireFormat.versions.upperBound): update one of them",
                retryable: false)
            await shutDown(because: error)
            throw error
        }
        self.hello = hello
        self.version = version
        var welcome = PluginRequest(id: 0, op: "welcome")
        welcome.version = version
        welcome.remote = launch.remoteName
        welcome.options = launch.options
        let reply = try await call(welcome, observer: nil)
        if reply.ok != true {
            let error = (reply.error ?? WireError(code: "invalid_name", errorClass: "permanent", message: nil))
                .backendError(plugin: launch.pluginName, operation: "accept the remote's options", path: nil)
            var refused = BackendError(error.code, "\(launch.pluginName) refused remote '\(launch.remoteName)': \(error.message)",
                                       cause: error.cause, retryable: error.isRetryable)
            refused.path = nil
            await shutDown(because: refused)
            throw refused
        }
        launch.logger.debug("plugin started", metadata: [
            "plugin": "\(launch.pluginName)", "pid": "\(process.pid)", "protocol": "\(version)",
            "capabilities": "\(hello.capabilities.enabledNames.joined(separator: ","))",
            "max_concurrency": "\(hello.maxConcurrency)",
        ])
    }

    /// Sends a request (its id is assigned here) and waits for its reply.
    func call(_ request: PluginRequest, observer: (any TransferObserver)?) async throws(BackendError) -> PluginMessage {
        var request = request
        if request.op != "welcome" {
            request.id = nextId
            nextId += 1
        }
        let line = request.line()
        let id = request.id
        return try await wait(for: id, operation: request.op, observer: observer) {
            if !writer.send(line) {
                fail(BackendError(.connectionLost, "\(launch.pluginName) no longer reads its input"))
            }
        }
    }

    private func wait(for id: Int, operation: String, observer: (any TransferObserver)?,
                      then send: () -> Void) async throws(BackendError) -> PluginMessage {
        if let failure { throw failure }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<PluginMessage, BackendError>, Never>) in
                let limit = id <= 0 ? max(launch.stallTimeout, Self.handshakeTimeout) : launch.stallTimeout
                pending[id] = Pending(operation: operation, continuation: continuation, observer: observer,
                                      lastActivity: clock.now, limit: limit)
                send()
            }
        } onCancel: {
            Task { await self.cancel(id, because: "the transfer was cancelled") }
        }
        return try result.get()
    }

    /// Gives up on one request: its caller gets `cancelled` now, and the plugin is asked to
    /// stop working on it (a plugin that does not know `cancel` answers "unsupported",
    /// which is ignored).
    private func cancel(_ id: Int, because reason: String) {
        guard let waiting = pending.removeValue(forKey: id) else { return }
        waiting.continuation.resume(returning: .failure(BackendError(.cancelled, reason)))
        sendCancel(for: id)
    }

    private func sendCancel(for id: Int) {
        guard id > 0 else { return }
        var request = PluginRequest(id: nextId, op: "cancel")
        nextId += 1
        request.request = id
        writer.send(request.line())
    }

    // MARK: What the plugin writes

    private func received(_ event: PipeLine) async {
        guard failure == nil else { return }
        switch event {
        case let .line(bytes):
            linesTaken += 1
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
            guard let message = PluginMessage.decode(bytes) else {
                fail(BackendError(.protocolViolation,
                                  "\(launch.pluginName) wrote a line that is not a protocol message: \(Self.quote(bytes)); restarting it",
                                  retryable: true))
                return
            }
            lastHeard = clock.now
            handle(message)
        case let .tooLong(prefix):
            fail(BackendError(.protocolViolation,
                              "\(launch.pluginName) wrote a line longer than \(PluginWireFormat.maxLineBytes) bytes: \(Self.quote(prefix))…; restarting it",
                              retryable: true))
        case .end:
            // Its stdout closed: it exited, crashed or was killed. Collect how, and what it
            // said on stderr on the way out, before failing the requests.
            let process = self.process
            let how = await BlockingIO.run { process.reap(grace: .seconds(2)) }
            for _ in 0..<50 where !errorOutputEnded { try? await Task.sleep(for: .milliseconds(10)) }
            guard failure == nil else { return }
            fail(BackendError(.connectionLost, "\(launch.pluginName) \(how)\(lastWords); restarting it"), alreadyExited: true)
        }
    }

    private func handle(_ message: PluginMessage) {
        switch message.type {
        case "hello":
            if let waiting = pending.removeValue(forKey: Self.helloId) {
                waiting.continuation.resume(returning: .success(message))
            }
        case "reply":
            guard let id = message.id else {
                fail(BackendError(.protocolViolation, "\(launch.pluginName) sent a reply without an id; restarting it",
                                  retryable: true))
                return
            }
            // A reply to a request given up on (timed out, cancelled) finds nothing here.
            if let waiting = pending.removeValue(forKey: id) {
                var message = message
                message.reportedBytes = waiting.reportedBytes
                waiting.continuation.resume(returning: .success(message))
            }
        case "progress":
            guard let id = message.id, var waiting = pending[id] else { return }
            waiting.lastActivity = clock.now
            if let bytes = message.bytes, bytes > waiting.reportedBytes {
                let delta = bytes - waiting.reportedBytes
                waiting.reportedBytes = bytes
                // The pause a bandwidth limit asks for cannot be applied to another
                // process's transfer in protocol 1; the bytes still count.
                _ = waiting.observer?.bytesTransferred(Int(delta))
            }
            if waiting.observer?.isCancelled == true && !waiting.cancelSent {
                waiting.cancelSent = true
                sendCancel(for: id)
            }
            pending[id] = waiting
        default:
            // Messages of a newer protocol version are ignored, so old Ferry keeps working
            // with newer plugins as long as they speak a version both know.
            launch.logger.debug("ignoring an unknown plugin message", metadata: ["type": "\(message.type)"])
        }
    }

    private func receivedError(_ event: PipeLine) {
        switch event {
        case let .line(bytes), let .tooLong(bytes):
            let text = String(decoding: bytes, as: UTF8.self)
            lastErrorLines.append(String(text.prefix(300)))
            if lastErrorLines.count > 3 { lastErrorLines.removeFirst() }
            launch.logger.info("\(text)", metadata: ["plugin": "\(launch.pluginName)"])
        case .end:
            errorOutputEnded = true
        }
    }

    /// The plugin's last stderr lines, for an error message.
    private var lastWords: String {
        let lines = lastErrorLines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        return lines.isEmpty ? "" : " (its last words: \(lines.joined(separator: " | ")))"
    }

    /// Bytes as a short, printable quote for an error message.
    static func quote(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes.prefix(80), as: UTF8.self)
        let printable = String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        return "'\(printable)\(bytes.count > 80 ? "…" : "")'"
    }

    // MARK: Watchdog

    private func checkForStalls() {
        guard failure == nil else { return }
        // Lines read but not handled yet: the plugin did speak, and this process was too
        // busy to listen (a starved thread pool). Judge once they are handled.
        guard reader.linesProduced <= linesTaken else { return }
        let now = clock.now
        for (id, waiting) in pending where now - waiting.lastActivity > waiting.limit {
            let seconds = Int(waiting.limit.inSeconds.rounded())
            if now - lastHeard > waiting.limit {
                // Not a word about anything: the whole process is stuck.
                fail(BackendError(.timeout, "\(launch.pluginName) said nothing for \(seconds) s while handling "
                    + "\(waiting.operation); killed it, restarting it\(lastWords)"))
                return
            }
            // It answers other requests: only this one is stuck.
            pending.removeValue(forKey: id)
            waiting.continuation.resume(returning: .failure(BackendError(
                .timeout, "\(launch.pluginName) sent nothing about \(waiting.operation) for \(seconds) s")))
            sendCancel(for: id)
        }
    }

    // MARK: Ending

    /// Fails every waiting request with `error` and kills the process.
    private func fail(_ error: BackendError, alreadyExited: Bool = false) {
        guard failure == nil else { return }
        failure = error
        launch.logger.warning("\(error.description)", metadata: ["plugin": "\(launch.pluginName)"])
        let waiting = pending
        pending.removeAll()
        for (_, item) in waiting { item.continuation.resume(returning: .failure(error)) }
        writer.abandon()
        reader.stop()
        if !alreadyExited {
            process.terminate()
            let process = self.process
            let errorReader = self.errorReader
            Task.detached {
                _ = await BlockingIO.run { process.reap(grace: .zero) }
                errorReader.stop()
            }
        } else {
            errorReader.stop()
        }
    }

    /// Ends the conversation politely: the plugin sees end of input and exits by itself
    /// (it is killed if it has not within two seconds).
    func close() {
        guard failure == nil else { return }
        failure = BackendError(.cancelled, "\(launch.pluginName) was shut down")
        let waiting = pending
        pending.removeAll()
        for (_, item) in waiting { item.continuation.resume(returning: .failure(BackendError(.cancelled, "shutting down"))) }
        writer.finish()
        let process = self.process
        let reader = self.reader
        let errorReader = self.errorReader
        Task.detached {
            _ = await BlockingIO.run { process.reap(grace: .seconds(2)) }
            reader.stop()
            errorReader.stop()
        }
    }

    private func shutDown(because error: BackendError) async {
        fail(error)
    }
}
