/// Which job starts next: strict priority between queues (a ready job of a higher queue
/// starts before any job of a lower one), FIFO within a queue, a concurrency cap per queue
/// and one over all. A capped queue does not block lower queues from using free slots.
///
/// A pure state machine over values: time comes in as seconds on a monotonic clock, so
/// tests drive it without waiting.
public struct SchedulerState: Sendable {
    public struct Job: Sendable, Hashable {
        public var path: String
        /// Index of the job's queue in priority order (0 is highest).
        public var rank: Int

        public init(path: String, rank: Int) {
            self.path = path
            self.rank = rank
        }
    }

    private var ready: [[Job]]
    private var readyHeads: [Int]
    private var delayed: [(readyAt: Double, job: Job)] = []
    private var running: [Int]
    private let caps: [Int]
    private let globalCap: Int
    public private(set) var runningCount = 0

    /// `queueCaps[i]` is the concurrency cap of the queue ranked `i`.
    public init(queueCaps: [Int], globalCap: Int) {
        caps = queueCaps.map { max(1, $0) }
        self.globalCap = max(1, globalCap)
        ready = Array(repeating: [], count: queueCaps.count)
        readyHeads = Array(repeating: 0, count: queueCaps.count)
        running = Array(repeating: 0, count: queueCaps.count)
    }

    /// Queues a job, ready now or (for a retry) not before `readyAt`.
    public mutating func add(_ job: Job, readyAt: Double? = nil) {
        let rank = min(max(job.rank, 0), ready.count - 1)
        var job = job
        job.rank = rank
        if let readyAt {
            delayed.append((readyAt, job))
        } else {
            ready[rank].append(job)
        }
    }

    /// Takes the jobs to start now, in the order to start them, and counts them as running.
    public mutating func start(now: Double) -> [Job] {
        promoteDelayed(now: now)
        var started: [Job] = []
        while runningCount < globalCap {
            guard let rank = ready.indices.first(where: { readyHeads[$0] < ready[$0].count && running[$0] < caps[$0] })
            else { break }
            let job = ready[rank][readyHeads[rank]]
            readyHeads[rank] += 1
            if readyHeads[rank] > 1024 && readyHeads[rank] * 2 > ready[rank].count {
                ready[rank].removeFirst(readyHeads[rank])
                readyHeads[rank] = 0
            }
            running[rank] += 1
            runningCount += 1
            started.append(job)
        }
        return started
    }

    /// Records that a started job ended (done, failed, or handed back for a retry).
    public mutating func finish(_ job: Job) {
        guard running.indices.contains(job.rank), running[job.rank] > 0 else { return }
        running[job.rank] -= 1
        runningCount -= 1
    }

    /// Removes and returns every waiting job (ready or delayed), e.g. when a run stops
    /// waiting for an offline backend. Running jobs are not touched.
    public mutating func drainWaiting() -> [Job] {
        var drained: [Job] = []
        for rank in ready.indices {
            drained.append(contentsOf: ready[rank][readyHeads[rank]...])
            ready[rank].removeAll()
            readyHeads[rank] = 0
        }
        drained.append(contentsOf: delayed.sorted { $0.readyAt < $1.readyAt }.map(\.job))
        delayed.removeAll()
        return drained
    }

    /// When the earliest delayed job becomes ready; nil when none waits.
    public var nextReadyTime: Double? {
        delayed.map(\.readyAt).min()
    }

    /// Jobs waiting (ready or delayed), not counting running ones.
    public var waitingCount: Int {
        zip(ready, readyHeads).reduce(0) { $0 + $1.0.count - $1.1 } + delayed.count
    }

    /// Jobs of one rank ready to start (not delayed, not running).
    public func readyCount(rank: Int) -> Int {
        ready.indices.contains(rank) ? ready[rank].count - readyHeads[rank] : 0
    }

    /// Nothing running and nothing waiting.
    public var isIdle: Bool { runningCount == 0 && waitingCount == 0 }

    private mutating func promoteDelayed(now: Double) {
        guard !delayed.isEmpty else { return }
        var still: [(readyAt: Double, job: Job)] = []
        for entry in delayed.sorted(by: { $0.readyAt < $1.readyAt }) {
            if entry.readyAt <= now {
                ready[entry.job.rank].append(entry.job)
            } else {
                still.append(entry)
            }
        }
        delayed = still
    }
}
