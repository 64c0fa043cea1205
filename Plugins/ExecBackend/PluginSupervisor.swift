import FerryPluginAPI
import Foundation

/// Keeps one plugin process running for a backend: starts it on first use, and after it
/// failed (crashed, hung, wrote garbage) starts a new one for the next request, waiting
/// as `RestartBackoff` says. A plugin that cannot even complete its handshake several
/// times in a row is reported as broken with a permanent error.
actor PluginSupervisor {
    let launch: PluginConnection.Launch
    let backoff: RestartBackoff
    /// Requests in flight at once: the plugin's `max_concurrency`, lowered by the remote's
    /// `concurrency` option.
    let limit = ConcurrencyLimit(capacity: 1)
    private let concurrencyCap: Int?

    private var current: PluginConnection?
    private var starting: Task<Result<PluginConnection, BackendError>, Never>?
    private var failures = 0
    private var failedStarts = 0
    private var lastFailureAt: ContinuousClock.Instant?
    private(set) var restarts = 0

    init(launch: PluginConnection.Launch, backoff: RestartBackoff = RestartBackoff(), concurrencyCap: Int?) {
        self.launch = launch
        self.backoff = backoff
        self.concurrencyCap = concurrencyCap
    }

    /// The live connection, starting one when there is none.
    func connection() async throws(BackendError) -> PluginConnection {
        if let current {
            if await current.isAlive { return current }
            // Another caller may have noticed the same dead connection meanwhile.
            if self.current === current {
                self.current = nil
                noteFailure()
            }
        }
        if let starting { return try await starting.value.get() }
        let delay = backoff.delay(afterFailures: failures)
        let since = lastFailureAt
        let launch = self.launch
        let task = Task { () -> Result<PluginConnection, BackendError> in
            if let since, delay > .zero {
                let wake = since + delay
                if wake > ContinuousClock().now { try? await Task.sleep(until: wake, clock: .continuous) }
            }
            do throws(BackendError) {
                return .success(try await PluginConnection.start(launch))
            } catch {
                return .failure(error)
            }
        }
        starting = task
        let result = await task.value
        starting = nil
        switch result {
        case let .success(connection):
            if failures > 0 || failedStarts > 0 { restarts += 1 }
            failedStarts = 0
            current = connection
            let hello = await connection.hello
            let allowed = min(hello?.maxConcurrency ?? 1, concurrencyCap ?? Int.max)
            await limit.setCapacity(allowed)
            return connection
        case let .failure(error):
            noteFailure()
            failedStarts += 1
            if failedStarts >= backoff.startFailuresBeforeGivingUp && error.isRetryable {
                throw BackendError(.io, "\(launch.pluginName) failed to start \(failedStarts) times in a row: \(error.message)",
                                   cause: error.cause, retryable: false)
            }
            throw error
        }
    }

    /// A request got an answer: the plugin works, so the next failure restarts it at once.
    func succeeded() {
        failures = 0
    }

    /// The plugin's capabilities, starting it if needed.
    func hello() async throws(BackendError) -> PluginHello {
        let connection = try await connection()
        if let hello = await connection.hello { return hello }
        throw BackendError(.protocolViolation, "\(launch.pluginName) has not said hello")
    }

    func shutDown() async {
        starting?.cancel()
        if let current { await current.close() }
        current = nil
    }

    private func noteFailure() {
        failures += 1
        lastFailureAt = ContinuousClock().now
    }
}
