import FerryCore
import FerryDaemon
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Runs a `DaemonRuntime` under swift-service-lifecycle: SIGTERM and SIGINT start the
/// graceful stop (the runtime's task is cancelled, transfers stop at a resumable point
/// within `watch.stop_timeout`, results are committed) and the process exits 0. With
/// `reload`, SIGHUP reads config.yml again: a valid one replaces the running runtime
/// (runs under way stop at a resumable point and start again under the new config); an
/// invalid one is reported and the old one kept.
struct LongRunningProcess: Service, CustomStringConvertible {
    let initial: DaemonRuntime
    let logger: Logger
    /// Builds the runtime from a freshly read config.yml; nil means "not reloadable".
    let reload: (@Sendable () throws -> DaemonRuntime)?
    /// Runs for the whole process beside the runtimes (the control API), and is stopped
    /// after the last runtime has stopped, so clients see the stop through to its end.
    let beside: (@Sendable () async -> Void)?

    /// How service-lifecycle's logs name it (the default would print the whole config).
    var description: String { "ferry \(initial.command)" }

    /// The runtime that runs now and its task, reachable from the cancellation handler.
    private final class Current: Sendable {
        private let running: Mutex<(runtime: DaemonRuntime, task: Task<Void, Never>)>

        init(_ runtime: DaemonRuntime) {
            running = Mutex((runtime, Task { await runtime.run() }))
        }

        /// Starts `runtime` in place of the one before, which has stopped.
        func replace(with runtime: DaemonRuntime) {
            running.withLock { $0 = (runtime, Task { await runtime.run() }) }
        }

        func cancel() { running.withLock { $0.task.cancel() } }

        /// Cancels the runtime and waits for it to end, at most its `stop_timeout` and two
        /// seconds for its last history writes: a transfer that does not notice its
        /// cancellation must not keep the process, or a reload, waiting. The journal
        /// resumes what it leaves.
        func stop(logger: Logger) async {
            let (runtime, task) = running.withLock { ($0.runtime, $0.task) }
            task.cancel()
            let limit = runtime.config.watch.stopTimeout + .seconds(2)
            if !(await DaemonRuntime.within(limit, clock: runtime.options.clock) { await task.value }) {
                logger.warning("transfers did not stop in time; going on without them (the journal resumes them on the next start)")
            }
        }
    }

    func run() async throws {
        let initial = self.initial
        let reload = self.reload
        let beside = self.beside
        let logger = self.logger
        let hangups: UnixSignalsSequence? = reload == nil ? nil : await UnixSignalsSequence(trapping: .sighup)
        // Detached: it must not see the graceful shutdown, which would close the API's
        // listeners while runs are still stopping; it is cancelled once they have.
        let companion = beside.map { beside in Task.detached { await beside() } }
        // Every runtime's state folder (a reload may bring another), closed once all is over.
        let states = Mutex([initial.state])
        await cancelWhenGracefulShutdown {
            let current = Current(initial)
            await withTaskCancellationHandler {
                if let hangups, let reload {
                    for await _ in hangups {
                        let fresh: DaemonRuntime
                        do {
                            fresh = try reload()
                        } catch {
                            logger.error("config not reloaded; keeping the running configuration",
                                         metadata: ["error": "\(Self.describe(error))"])
                            continue
                        }
                        logger.info("config reloaded", metadata: ["folders": "\(fresh.pairs.count)",
                                                                   "schedules": "\(fresh.config.schedules.count)"])
                        states.withLock { $0.append(fresh.state) }
                        // The old runtime stops first: two watchers on one folder would only
                        // queue behind each other's pair locks.
                        await current.stop(logger: logger)
                        current.replace(with: fresh)
                        if Task.isCancelled { current.cancel() }
                    }
                }
                // Until the graceful stop (the signals end the loop above at the same point).
                while !Task.isCancelled { await initial.options.clock.sleep(for: 3600.0) }
                await current.stop(logger: logger)
            } onCancel: {
                current.cancel()
            }
        }
        companion?.cancel()
        await companion?.value
        // Nothing runs any more: the journals' write-ahead logs are checkpointed and removed
        // now rather than replayed by the next start.
        var closed = Set<ObjectIdentifier>()
        for state in states.withLock({ $0 }) where closed.insert(ObjectIdentifier(state)).inserted {
            await state.close()
        }
    }

    static func describe(_ error: any Error) -> String {
        if let failure = error as? CommandFailure { return failure.message }
        return "\(error)"
    }

    /// Runs the process until SIGTERM/SIGINT; returns after the graceful stop.
    static func run(_ runtime: DaemonRuntime, logger: Logger, beside: (@Sendable () async -> Void)? = nil,
                    reload: (@Sendable () throws -> DaemonRuntime)? = nil) async throws {
        let service = LongRunningProcess(initial: runtime, logger: logger, reload: reload, beside: beside)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
