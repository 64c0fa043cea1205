import FerryPlanning
import FerryPluginAPI
import FerrySystem

/// One backend operation outside the engine's jobs — a folder's listing, a bundle or its
/// manifest, the remote catalog — run as a one-job run of the engine's own
/// `TransferStateMachine`, so that its retries, its backoff, what it takes for an outage,
/// how long it waits for an offline backend and when it gives up are the engine's rules,
/// decided in one place.
///
/// Time comes from a `FerryClock`, so the waits are the run's (tests move the clock).
package struct RetriedOperation: Sendable {
    package let retry: RetryPolicy
    package let backend: any Backend
    package var clock: any FerryClock = SystemClock()

    /// Told when the backend stops answering and when it is back (the run's sink).
    package var onOffline: @Sendable (_ message: String, _ nextProbeSeconds: Double) -> Void = { _, _ in }
    package var onOnline: @Sendable (_ offlineSeconds: Double) -> Void = { _ in }

    package init(retry: RetryPolicy, backend: any Backend, clock: any FerryClock = SystemClock(),
                 onOffline: @escaping @Sendable (_ message: String, _ nextProbeSeconds: Double) -> Void = { _, _ in },
                 onOnline: @escaping @Sendable (_ offlineSeconds: Double) -> Void = { _ in }) {
        self.retry = retry
        self.backend = backend
        self.clock = clock
        self.onOffline = onOffline
        self.onOnline = onOnline
    }

    /// Runs `body` until it succeeds; throws its last error once the state machine fails
    /// the operation for good or gives up waiting for the backend.
    package func run<T: Sendable>(_ body: () async throws(BackendError) -> T) async throws(BackendError) -> T {
        let job = TransferStateMachine.Job(path: "", rank: 0)
        var machine = TransferStateMachine(queueCaps: [1], globalCap: 1, retry: retry, batchWindow: 0, batchLimit: 1)
        var failures = 0
        var lastError = BackendError(.io, "the operation did not run")
        var lastProbeFailure: BackendError?
        var actions = machine.handle(.jobsArrived([job]), now: clock.now())
        // The one job is all there is: set aside, its next pass begins at once (after the
        // pass's backoff), as a file's would once the others are over.
        actions += machine.handle(.allJobsQueued, now: clock.now())
        while true {
            var next: TransferStateMachine.Event?
            for action in actions {
                switch action {
                case .start, .startBatch:
                    // One job that is never batchable: it only ever starts alone.
                    do {
                        return try await body()
                    } catch {
                        failures += 1
                        lastError = error
                        next = .jobFailed(job, failures: failures, TransferStateMachine.Failure(error))
                    }
                case .recordFailure, .handBack, .dropStopped:
                    throw lastError
                case .probe:
                    do throws(BackendError) {
                        try await backend.checkReachable()
                        lastProbeFailure = nil
                    } catch {
                        lastProbeFailure = error.suggestsOutage ? error : nil
                    }
                    next = .probeAnswered(reachable: lastProbeFailure == nil)
                case let .reportOffline(nextProbeIn):
                    onOffline(lastProbeFailure?.description ?? lastError.description, nextProbeIn)
                case let .reportOnline(offlineSeconds):
                    onOnline(offlineSeconds)
                case .recordRetry, .setAside, .recordSuccess, .park, .commit, .place:
                    // Nothing to book: the operation's outcome is its return value. A retry
                    // waits for the machine's timer below.
                    break
                }
            }
            if next == nil {
                if Task.isCancelled {
                    next = .stopRequested
                } else if let wake = machine.nextWake {
                    await clock.sleep(until: wake)
                    next = .timerFired
                } else {
                    throw lastError
                }
            }
            if let event = next {
                if case .stopRequested = event {
                    _ = machine.handle(event, now: clock.now())
                    throw BackendError(.cancelled, "stopped", cause: lastError.description)
                }
                actions = machine.handle(event, now: clock.now())
            }
        }
    }
}

extension TransferStateMachine.Failure {
    /// How a backend error counts for the decisions.
    package init(_ error: BackendError) {
        if error.suggestsOutage {
            self = .outage
        } else if error.isRetryable {
            self = .retryable(retryAfter: error.retryAfterSeconds)
        } else {
            self = .permanent
        }
    }
}
