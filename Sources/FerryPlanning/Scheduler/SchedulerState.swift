/// Which job starts next: strict priority between queues (a ready job of a higher queue
/// starts before any job of a lower one), FIFO within a queue, a concurrency cap per queue
/// and one over all. A capped queue does not block lower queues from using free slots.
///
/// A queue's cap counts its bandwidth-bound jobs only. A small file's job (`Job.small`)
/// is one round trip: it takes a slot of the global cap and passes its queue's large jobs
/// waiting at the cap, since holding it back saves no bandwidth for them and leaves slots
/// idle (2,000 photos went over two connections where rclone and curl use four).
///
/// Batchable jobs (remote deletes the backend takes many to a request) start together:
/// when one is next in its queue, up to `jobBatchSize` of its queue's ready batchable jobs
/// start with it as one batch, which takes one slot until each of its jobs has finished.
/// Small jobs that may go together (`Job.sendsWithOthers`: small files sent one after the
/// other over one connection) start the same way, up to `smallBatchSize` of them, in a
/// small job's slot: outside the queue's cap.
///
/// A pure state machine over values: time comes in as seconds on a monotonic clock, so
/// tests drive it without waiting.
public struct SchedulerState: Sendable {
    public struct Job: Sendable, Hashable {
        public var path: String
        /// Index of the job's queue in priority order (0 is highest).
        public var rank: Int
        /// The job may start in a batch with others of its queue (a remote delete).
        public var batchable: Bool
        /// The job moves a small file: its queue's cap does not count it.
        public var small: Bool
        /// A small job that may start with the small jobs of its queue next to it that may
        /// too, as one slot (small files sent one after the other on one connection).
        public var sendsWithOthers: Bool

        public init(path: String, rank: Int, batchable: Bool = false, small: Bool = false, sendsWithOthers: Bool = false) {
            self.path = path
            self.rank = rank
            self.batchable = batchable
            self.small = small && !batchable
            self.sendsWithOthers = self.small && sendsWithOthers
        }
    }

    /// What takes one slot: a job, or a batch of batchable jobs of one queue.
    public enum Slot: Sendable, Equatable {
        case single(Job)
        case batch([Job])

        public var jobs: [Job] {
            switch self {
            case let .single(job): [job]
            case let .batch(jobs): jobs
            }
        }
    }

    /// One queue's ready jobs in arrival order, taken from the front without moving the rest.
    private struct ReadyLine: Sendable {
        private var entries: [(order: Int, job: Job)] = []
        private var head = 0

        var count: Int { entries.count - head }
        /// When the first job arrived, compared across lines to keep a queue's order.
        var firstOrder: Int? { head < entries.count ? entries[head].order : nil }
        var first: Job? { head < entries.count ? entries[head].job : nil }

        mutating func append(_ job: Job, order: Int) {
            entries.append((order, job))
        }

        mutating func removeFirst() -> Job? {
            guard head < entries.count else { return nil }
            let job = entries[head].job
            head += 1
            if head > 1024 && head * 2 > entries.count {
                entries.removeFirst(head)
                head = 0
            }
            return job
        }

        mutating func removeAll() -> [(order: Int, job: Job)] {
            let rest = Array(entries[head...])
            entries.removeAll()
            head = 0
            return rest
        }
    }

    /// Ready jobs per rank: those that start alone under the queue's cap, small ones that
    /// start alone outside it, and those that start in batches.
    private var ready: [ReadyLine]
    private var readySmall: [ReadyLine]
    private var readyBatchable: [ReadyLine]
    /// Arrival counter, so a queue's two lines start in the order their jobs arrived.
    private var arrivals = 0
    private var delayed: [(readyAt: Double, job: Job)] = []
    /// Running jobs per rank: those that count against the queue's cap, and small ones.
    private var running: [Int]
    private var runningSmall: [Int]
    /// Batches under way: which batch a running job belongs to, and how many of each
    /// batch's jobs have not finished yet.
    private var batchOfJob: [Job: Int] = [:]
    private var unfinishedInBatch: [Int: Int] = [:]
    private var batchesStarted = 0
    private let caps: [Int]
    private let globalCap: Int
    private let jobBatchSize: Int
    private let smallBatchSize: Int
    public private(set) var runningCount = 0

    /// `queueCaps[i]` is the concurrency cap of the queue ranked `i`; `jobBatchSize` the
    /// most batchable jobs that start together; `smallBatchSize` the most small jobs that
    /// go together (`Job.sendsWithOthers`).
    public init(queueCaps: [Int], globalCap: Int, jobBatchSize: Int = 1, smallBatchSize: Int = 1) {
        caps = queueCaps.map { max(1, $0) }
        self.globalCap = max(1, globalCap)
        self.jobBatchSize = max(1, jobBatchSize)
        self.smallBatchSize = max(1, smallBatchSize)
        ready = Array(repeating: ReadyLine(), count: queueCaps.count)
        readySmall = Array(repeating: ReadyLine(), count: queueCaps.count)
        readyBatchable = Array(repeating: ReadyLine(), count: queueCaps.count)
        running = Array(repeating: 0, count: queueCaps.count)
        runningSmall = Array(repeating: 0, count: queueCaps.count)
    }

    /// Queues a job, ready now or (for a retry) not before `readyAt`.
    public mutating func add(_ job: Job, readyAt: Double? = nil) {
        let rank = min(max(job.rank, 0), ready.count - 1)
        var job = job
        job.rank = rank
        if let readyAt {
            delayed.append((readyAt, job))
        } else {
            makeReady(job)
        }
    }

    /// Takes the jobs to start now, in the order to start them, and counts them as running.
    public mutating func start(now: Double) -> [Job] {
        startSlots(now: now).flatMap(\.jobs)
    }

    /// Takes what starts now, one element per slot it fills, in the order to start them.
    public mutating func startSlots(now: Double) -> [Slot] {
        promoteDelayed(now: now)
        var started: [Slot] = []
        while runningCount < globalCap {
            guard let (rank, line) = nextLine() else { break }
            switch line {
            case .batchable:
                var jobs: [Job] = []
                while jobs.count < jobBatchSize, let job = readyBatchable[rank].removeFirst() { jobs.append(job) }
                started.append(startBatch(jobs))
                running[rank] += 1
            case .capped:
                guard let job = ready[rank].removeFirst() else { return started }
                started.append(.single(job))
                running[rank] += 1
            case .small:
                guard let job = readySmall[rank].removeFirst() else { return started }
                var jobs = [job]
                while job.sendsWithOthers, jobs.count < smallBatchSize, readySmall[rank].first?.sendsWithOthers == true,
                      let next = readySmall[rank].removeFirst() {
                    jobs.append(next)
                }
                started.append(jobs.count == 1 ? .single(job) : startBatch(jobs))
                runningSmall[rank] += 1
            }
            runningCount += 1
        }
        return started
    }

    private enum Line { case capped, small, batchable }

    /// Jobs that share one slot until the last of them has finished (`finish`).
    private mutating func startBatch(_ jobs: [Job]) -> Slot {
        batchesStarted += 1
        for job in jobs { batchOfJob[job] = batchesStarted }
        unfinishedInBatch[batchesStarted] = jobs.count
        return .batch(jobs)
    }

    /// The highest queue with a job allowed to start, and which of its lines goes next:
    /// whichever line's first job arrived first, among those the queue's cap lets start.
    private func nextLine() -> (rank: Int, line: Line)? {
        for rank in ready.indices {
            let underCap = running[rank] < caps[rank]
            var best: (order: Int, line: Line)?
            func consider(_ order: Int?, _ line: Line) {
                guard let order else { return }
                if best.map({ order < $0.order }) ?? true { best = (order, line) }
            }
            consider(readySmall[rank].firstOrder, .small)
            if underCap {
                consider(ready[rank].firstOrder, .capped)
                consider(readyBatchable[rank].firstOrder, .batchable)
            }
            if let best { return (rank, best.line) }
        }
        return nil
    }

    /// Records that a started job ended (done, failed, or handed back for a retry). A
    /// batch's slot is free once its last job has ended.
    public mutating func finish(_ job: Job) {
        if let batch = batchOfJob.removeValue(forKey: job), let unfinished = unfinishedInBatch[batch] {
            guard unfinished <= 1 else {
                unfinishedInBatch[batch] = unfinished - 1
                return
            }
            unfinishedInBatch[batch] = nil
        }
        guard running.indices.contains(job.rank) else { return }
        if job.small {
            guard runningSmall[job.rank] > 0 else { return }
            runningSmall[job.rank] -= 1
        } else {
            guard running[job.rank] > 0 else { return }
            running[job.rank] -= 1
        }
        runningCount -= 1
    }

    /// Removes and returns every waiting job (ready or delayed), e.g. when a run stops
    /// waiting for an offline backend. Running jobs are not touched.
    public mutating func drainWaiting() -> [Job] {
        var drained: [Job] = []
        for rank in ready.indices {
            let waiting = ready[rank].removeAll() + readySmall[rank].removeAll() + readyBatchable[rank].removeAll()
            drained.append(contentsOf: waiting.sorted { $0.order < $1.order }.map(\.job))
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
        ready.indices.reduce(0) { $0 + readyCount(rank: $1) } + delayed.count
    }

    /// Jobs of one rank ready to start (not delayed, not running).
    public func readyCount(rank: Int) -> Int {
        ready.indices.contains(rank) ? ready[rank].count + readySmall[rank].count + readyBatchable[rank].count : 0
    }

    /// Nothing running and nothing waiting.
    public var isIdle: Bool { runningCount == 0 && waitingCount == 0 }

    private mutating func promoteDelayed(now: Double) {
        guard !delayed.isEmpty else { return }
        var still: [(readyAt: Double, job: Job)] = []
        for entry in delayed.sorted(by: { $0.readyAt < $1.readyAt }) {
            if entry.readyAt <= now {
                makeReady(entry.job)
            } else {
                still.append(entry)
            }
        }
        delayed = still
    }

    private mutating func makeReady(_ job: Job) {
        arrivals += 1
        if job.batchable {
            readyBatchable[job.rank].append(job, order: arrivals)
        } else if job.small {
            readySmall[job.rank].append(job, order: arrivals)
        } else {
            ready[job.rank].append(job, order: arrivals)
        }
    }
}
