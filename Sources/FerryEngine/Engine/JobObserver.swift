import FerryPluginAPI
import Synchronization

/// The observer handed to a backend for one transfer: counts bytes into the run's
/// progress, applies the bandwidth limits (the run's, and any shared ones such as a
/// remote's or the job's queue's: the longest pause wins), and carries cancellation.
package final class JobObserver: TransferObserver {
    package let queue: String
    package let progress: RunProgress
    package let throttle: ByteThrottle?
    package let sharedThrottles: [ByteThrottle]
    private let cancelled = Atomic<Bool>(false)
    private let moved = Atomic<Int64>(0)

    package init(queue: String, progress: RunProgress, throttle: ByteThrottle?, sharedThrottles: [ByteThrottle] = []) {
        self.queue = queue
        self.progress = progress
        self.throttle = throttle
        self.sharedThrottles = sharedThrottles
    }

    package func bytesTransferred(_ count: Int) -> Duration {
        moved.add(Int64(count), ordering: .relaxed)
        progress.moved(queue: queue, bytes: count)
        var pause = throttle?.reserve(count) ?? .zero
        for shared in sharedThrottles { pause = max(pause, shared.reserve(count)) }
        return pause
    }

    package var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    var bytesMoved: Int64 { moved.load(ordering: .relaxed) }

    package func cancel() { cancelled.store(true, ordering: .relaxed) }
}
