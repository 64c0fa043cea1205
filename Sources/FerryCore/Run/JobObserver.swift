import FerryPluginAPI
import Synchronization

/// The observer handed to a backend for one transfer: counts bytes into the run's
/// progress, applies the bandwidth limit, and carries cancellation.
final class JobObserver: TransferObserver {
    let queue: String
    let progress: RunProgress
    let throttle: ByteThrottle?
    private let cancelled = Atomic<Bool>(false)
    private let moved = Atomic<Int64>(0)

    init(queue: String, progress: RunProgress, throttle: ByteThrottle?) {
        self.queue = queue
        self.progress = progress
        self.throttle = throttle
    }

    func bytesTransferred(_ count: Int) -> Duration {
        moved.add(Int64(count), ordering: .relaxed)
        progress.moved(queue: queue, bytes: count)
        return throttle?.reserve(count) ?? .zero
    }

    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    var bytesMoved: Int64 { moved.load(ordering: .relaxed) }

    func cancel() { cancelled.store(true, ordering: .relaxed) }
}
