import FerryJournal
import ServiceLifecycle
import Synchronization

/// Writes each remote outage's beginning and end to the run history for the health report,
/// in the order they were reported. Reports come from event sinks, which cannot wait for
/// a database: they queue here, and `run()` writes them one after another, so a remote
/// that comes back at once never has its end written before its beginning.
public final class OutageRecorder: Service {
    private enum Report: Sendable {
        case began(remote: String, at: Double)
        case ended(remote: String, at: Double)
    }

    private let state: StateFolder
    private let queue = Mutex<[Report]>([])
    private let wake: AsyncStream<Void>
    private let wakeUp: AsyncStream<Void>.Continuation

    public init(state: StateFolder) {
        self.state = state
        (wake, wakeUp) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    public func began(remote: String, at time: Double) {
        queue.withLock { $0.append(.began(remote: remote, at: time)) }
        wakeUp.yield()
    }

    public func ended(remote: String, at time: Double) {
        queue.withLock { $0.append(.ended(remote: remote, at: time)) }
        wakeUp.yield()
    }

    /// Writes reports as they come, until cancelled.
    public func run() async {
        for await _ in wake { await writeQueued() }
    }

    /// Writes what is queued now, in order. Called by `run()`, and once more after it has
    /// ended (never beside it), outside the cancelled scope, for what came in last.
    public func writeQueued() async {
        while let report = queue.withLock({ $0.first }) {
            do throws(HistoryError) {
                let history = try await state.history()
                switch report {
                case let .began(remote, time): try await history.outageBegan(remote: remote, at: time)
                case let .ended(remote, time): try await history.outageEnded(remote: remote, at: time)
                }
            } catch {
                // A write refused because the runtime is stopping stays queued for the last
                // call; any other failure loses one line of the health report, not a run.
                if Task.isCancelled { return }
            }
            queue.withLock { _ = $0.removeFirst() }
        }
    }
}
