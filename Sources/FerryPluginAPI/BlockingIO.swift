import Foundation

/// Runs blocking system calls (file I/O, libcurl, libarchive) off Swift's cooperative
/// thread pool, whose few threads must never wait on the kernel.
///
/// The work runs on `BlockingThreadPool`, which never makes a call wait for another: a
/// throttled upload that sleeps for a minute, a transfer stuck until its stall timeout or a
/// blocking read cannot hold up a probe or a thumbnail's transfer. A Dispatch queue did:
/// under a loaded machine its worker count stayed at the number of cores, and a probe
/// queued behind two long transfers for half a minute (an outage was given up while the
/// server was back) and a settled thumbnail waited for a whole video.
public enum BlockingIO {
    static let pool = BlockingThreadPool()

    public static func run<T: Sendable, E: Error>(
        _ body: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        // A pool thread runs outside the task: the folder's refusal of housekeeping
        // deletions (a task-local) goes along, bound there only when it is set.
        let deletionsAllowed = HousekeepingDeletions.allowed
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            pool.submit {
                let outcome = { () -> Result<T, E> in
                    do throws(E) {
                        return .success(try body())
                    } catch {
                        return .failure(error)
                    }
                }
                continuation.resume(returning: deletionsAllowed ? outcome() : HousekeepingDeletions.$allowed.withValue(false, operation: outcome))
            }
        }
        return try result.get()
    }
}

/// Threads for blocking calls: a waiting thread takes the next call; when fewer threads
/// wait than calls are queued, a new thread is started, so a call never waits for another
/// to finish. Threads idle for 30 s end, so a quiet process keeps none.
///
/// `@unchecked Sendable` is sound: every stored property but `condition` and
/// `idleLifetime` is read and written only while `condition` is locked.
final class BlockingThreadPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var head = 0
    /// Threads inside `wait`, each of which takes a queued job when it wakes.
    private var waiting = 0
    private(set) var threadCount = 0
    private let idleLifetime: TimeInterval

    init(idleLifetime: TimeInterval = 30) {
        self.idleLifetime = idleLifetime
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        let queued = jobs.count - head
        let startThread = waiting < queued
        if startThread {
            threadCount += 1
        } else {
            condition.signal()
        }
        condition.unlock()
        if startThread {
            let thread = Thread { [self] in work() }
            thread.name = "ferry.blocking-io"
            thread.start()
        }
    }

    private func work() {
        condition.lock()
        while true {
            if head < jobs.count {
                let job = jobs[head]
                // The slot lets go of the job at once: a finished job's closure (and what it
                // captured: open files, a journal) must not live on until compaction.
                jobs[head] = {}
                head += 1
                if head > 256 && head * 2 > jobs.count {
                    jobs.removeFirst(head)
                    head = 0
                }
                condition.unlock()
                job()
                condition.lock()
                continue
            }
            waiting += 1
            let woken = condition.wait(until: Date(timeIntervalSinceNow: idleLifetime))
            waiting -= 1
            // A spurious wake-up finds nothing and waits again; a timed-out thread still
            // takes a job queued meanwhile (its submit counted on a waiting thread).
            if !woken && head >= jobs.count {
                threadCount -= 1
                condition.unlock()
                return
            }
        }
    }
}
