import Synchronization

/// The observers of the transfers under way, so that cancelling the run reaches them (a
/// transfer runs on a blocking thread and sees only its observer's flag).
final class RunningTransfers: Sendable {
    private let observers = Mutex<[ObjectIdentifier: JobObserver]>([:])

    package func add(_ observer: JobObserver) {
        observers.withLock { $0[ObjectIdentifier(observer)] = observer }
    }

    package func remove(_ observer: JobObserver) {
        _ = observers.withLock { $0.removeValue(forKey: ObjectIdentifier(observer)) }
    }

    package func cancelAll() {
        for observer in observers.withLock({ Array($0.values) }) { observer.cancel() }
    }
}
