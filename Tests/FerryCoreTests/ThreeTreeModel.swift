import FerryPluginAPI
@testable import FerryCore
@testable import FerryPlanning

/// A file on one side of the model: its abstract content and what a scan or listing shows.
struct ThreeTreeLocalFile: Equatable, Sendable {
    var content: Int
    var version: LocalVersion
}

struct ThreeTreeRemoteFile: Equatable, Sendable {
    var content: Int
    /// What a listing shows.
    var version: RemoteVersion
    /// The time a `HEAD` or `GET` tells instead of the listing's (S3's `x-amz-meta-mtime`).
    var storedTime: Int64? = nil

    /// What a `HEAD`, a `GET` or an upload's answer tells of the file.
    var statVersion: RemoteVersion {
        RemoteVersion(size: version.size, modifiedNanos: storedTime ?? version.modifiedNanos, etag: version.etag)
    }
}

/// A version moved into a trash (or destroyed), with the path it was taken from.
struct ThreeTreeTrashed: Hashable, Comparable, Sendable, CustomStringConvertible {
    var path: String
    var content: Int
    /// A remote version as it was listed (what `displace` compares with the planned one).
    var version: RemoteVersion? = nil

    static func < (lhs: Self, rhs: Self) -> Bool { (lhs.path, lhs.content) < (rhs.path, rhs.content) }
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.path == rhs.path && lhs.content == rhs.content }
    func hash(into hasher: inout Hasher) {
        hasher.combine(path)
        hasher.combine(content)
    }
    var description: String { "#\(content) from \(path)" }
}

/// The order in which a run carries out its jobs: the plan's (follow-ups last, as the
/// engine queues them), or a seeded shuffle that picks any waiting job next.
struct ThreeTreeOrder {
    private var state: UInt64?

    init(seed: UInt64?) { state = seed }

    mutating func pick(among count: Int) -> Int {
        guard var state, count > 1 else { return 0 }
        // SplitMix64: small, seedable, the same on every platform.
        state &+= 0x9E37_79B9_7F4A_7C15
        self.state = state
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed >> 31
        return Int(mixed % UInt64(count))
    }
}

/// The three trees of the model (the local folder, the remote, the journal as the synced
/// tree) and the two trashes, with a pure executor that carries out a plan's jobs as
/// `TransferExecutor` and `TransferEngine.bookSuccess` do in a world where nothing else
/// changes meanwhile: no device writes, no request fails, every answer arrives (but where
/// `sync` is asked to stop the run as a kill would).
struct ThreeTreeWorld: Sendable {
    let remoteKind: ThreeTreeRemoteKind
    var local: [String: ThreeTreeLocalFile] = [:]
    var remote: [String: ThreeTreeRemoteFile] = [:]
    /// The trashes by trash path (`STAMP/path`, the job's `moveTarget`).
    var localTrashed: [String: ThreeTreeTrashed] = [:]
    var remoteTrashed: [String: ThreeTreeTrashed] = [:]
    var localTrash: [ThreeTreeTrashed] { localTrashed.values.sorted() }
    var remoteTrash: [ThreeTreeTrashed] { remoteTrashed.values.sorted() }
    /// Versions overwritten or deleted without going to a trash (the trash is on: none should be).
    var destroyed: [ThreeTreeTrashed] = []
    /// What the executor did that should never happen, as it happened (moved to `Run.problems`).
    var incidents: [String] = []
    var journal: [String: FileRecord] = [:]
    /// The content the journal recorded as synced, per path, when the scenario was made.
    var base: [String: Int] = [:]
    /// The local rename the scenario made, and the file it moved.
    var renamed: (from: String, to: String, file: ThreeTreeLocalFile)?
    private var lastInode: Int64 = 100
    private var lastWrite = 0
    /// Times for downloaded files whose remote keeps none: later than any generated time.
    private var clock: Int64 = ThreeTreeScenario.t0 + 1_000_000 * ThreeTreeScenario.second + 777

    init(remoteKind: ThreeTreeRemoteKind) {
        self.remoteKind = remoteKind
    }

    /// A remote write's number (for ETags that change with every write).
    mutating func newWrite() -> Int {
        lastWrite += 1
        return lastWrite
    }

    mutating func newInode() -> Int64 {
        lastInode += 1
        return lastInode
    }

    private mutating func freshTime() -> Int64 {
        clock += ThreeTreeScenario.second
        return clock
    }

    /// What a run came to.
    struct Run {
        var plan: Plan
        /// The plan's jobs after rename detection, as the engine starts them.
        var jobs: [FileRecord]
        /// Jobs carried out, follow-ups included.
        var steps = 0
        /// What should never happen in a quiet world: failed jobs, files decided again
        /// during the run, versions destroyed, a run that does not end.
        var problems: [String] = []
    }

    /// One sync: scan, list, plan (with rename detection, as `PagedPlanning` does), write the
    /// plan's rows, and carry out every job and follow-up in `order`.
    ///
    /// `interruptAfter`: the run stops (a kill) after that many jobs, and the results of the
    /// last `unbooked` of them never reach the journal, though their effects on the trees stay.
    mutating func sync(options: PlanOptions, classifier: QueueClassifier, now: Double, order: inout ThreeTreeOrder,
                       stepsPerJob: Int = 4, interruptAfter: Int? = nil, unbooked: Int = 0) throws -> Run {
        let entries = try local.keys.sorted().map { LocalEntry(path: try RelativePath($0), version: local[$0]!.version) }
        let (merged, requeued) = ScanReconciler.reconcile(records: journal, scan: ScanResult(entries: entries, notes: []),
                                                          pairId: 1, classifier: classifier, now: now)
        var listing: [String: RemoteEntry] = [:]
        for (path, file) in remote {
            listing[path] = RemoteEntry(path: try RelativePath(path), kind: .file, size: file.version.size,
                                        modifiedNanos: file.version.modifiedNanos, etag: file.version.etag)
        }
        let plan = try Planner.plan(pairId: 1, records: merged, remote: listing, options: options, classifier: classifier,
                                    now: now, requeued: requeued)
        for record in plan.changedRecords { journal[record.path] = record }
        for path in plan.forgottenPaths { journal[path] = nil }
        var jobs = plan.jobs
        if options.mode == .sync {
            let renames = RenameDetection.renames(in: jobs, notRenamed: Set(plan.resumedDisplacements))
            if !renames.isEmpty {
                jobs = RenameDetection.applying(renames, to: jobs)
                for move in RenameDetection.applying(renames, to: renames.map(\.from)) { journal[move.path] = move }
                for rename in renames {
                    guard var row = journal[rename.to] else { continue }
                    row.waitForMove()
                    row.updatedAt = now
                    journal[rename.to] = row
                }
            }
        }

        var run = Run(plan: plan, jobs: jobs)
        var waiting = jobs
        let limit = stepsPerJob * jobs.count
        var booked = [journal]
        while !waiting.isEmpty {
            if let interruptAfter, run.steps >= interruptAfter { break }
            guard run.steps < limit else {
                run.problems.append("the run did not end within \(limit) jobs (\(jobs.count) planned); still waiting: "
                    + waiting.map { "\($0.path) \($0.action.map { "\($0)" } ?? "-")" }.joined(separator: ", "))
                break
            }
            let job = waiting.remove(at: order.pick(among: waiting.count))
            run.steps += 1
            waiting += execute(job, options: options, now: now, problems: &run.problems)
            run.problems += incidents
            incidents = []
            if interruptAfter != nil { booked.append(journal) }
        }
        if let interruptAfter, run.steps >= interruptAfter {
            // Killed: the results not yet committed are lost, their effects on the trees stay.
            journal = booked[max(0, booked.count - 1 - unbooked)]
        }
        return run
    }

    // MARK: The executor

    private enum Outcome {
        /// `transferred`: the row, in sync, is written.
        case saved(FileRecord)
        /// `deleted` or `vanished`: the row is dropped.
        case removed
        case moved(saved: [FileRecord], removed: [String], next: [FileRecord])
        case compared(FileRecord, equal: Bool)
        case decidedAgain(FileRecord)
        case failed(String)
    }

    /// Carries out one job and books its outcome as `TransferEngine.bookSuccess` does;
    /// returns the follow-up jobs it leaves for this run.
    private mutating func execute(_ job: FileRecord, options: PlanOptions, now: Double,
                                  problems: inout [String]) -> [FileRecord] {
        let outcome: Outcome
        switch job.action {
        case .upload?: outcome = upload(job, options: options, now: now)
        case .download?: outcome = download(job, options: options, now: now)
        case .deleteRemote?: outcome = deleteRemote(job, options: options, now: now)
        case .deleteLocal?: outcome = deleteLocal(job)
        case .moveRemote?: outcome = moveRemote(job, now: now)
        case .keepBothLocalLoses?: outcome = keepBothLocalLoses(job, options: options, now: now)
        case .keepBothRemoteLoses?: outcome = keepBothRemoteLoses(job, now: now)
        case .compareContent?: outcome = compareContent(job, options: options, now: now)
        case nil: outcome = .removed
        }
        switch outcome {
        case let .saved(record):
            journal[record.path] = record
        case .removed:
            journal[job.path] = nil
        case let .moved(saved, removed, next):
            for path in removed { journal[path] = nil }
            for record in saved { journal[record.path] = record }
            return next
        case let .compared(record, equal):
            journal[record.path] = record
            if !equal && record.status != .conflict { return [record] }
        case let .decidedAgain(record):
            problems.append("\(job.path): \(job.action.map { "\($0)" } ?? "-") found the remote changed and decided again "
                + "(\(record.lastError ?? "")), though nothing else wrote it")
            journal[record.path] = record
            if record.status != .conflict && record.action != nil { return [record] }
        case let .failed(message):
            problems.append("\(job.path): \(job.action.map { "\($0)" } ?? "-") failed: \(message)")
            var record = journal[job.path] ?? job
            record.failForGood(failures: 1, error: message, at: now)
            journal[job.path] = record
        }
        return []
    }

    private static func sameLocal(_ lhs: LocalVersion, _ rhs: LocalVersion) -> Bool {
        lhs.size == rhs.size && lhs.modifiedNanos == rhs.modifiedNanos
    }

    /// `TransferExecutor.isDisplaced`: the version moved aside is the planned one.
    private static func isDisplaced(_ moved: RemoteVersion, _ expected: RemoteVersion) -> Bool {
        if moved.isSameVersion(as: expected) { return true }
        guard moved.size == expected.size, let time = moved.modifiedNanos, let expectedTime = expected.modifiedNanos else {
            return false
        }
        return time == expectedTime
    }

    /// `TransferExecutor.decidedAgain`.
    private func decidedAgain(_ planned: FileRecord, current: RemoteVersion?, options: PlanOptions, now: Double,
                              message: String) -> FileRecord {
        var record = planned
        record.remote = current
        let note = "decided again: "
        let tries = (planned.lastError?.hasPrefix(note) == true ? planned.attempts : 0) + 1
        guard tries <= 5 else {
            record.markConflict(reason: "the remote copy kept changing while this device wrote it")
            return record
        }
        var deciding = record
        deciding.action = nil
        record = Planner.applying(Planner.decide(deciding, options: options), to: record, options: options, now: now)
        if record.action != nil {
            record.attempts = tries
            record.lastError = note + message
        }
        return record
    }

    /// Moves the remote version of `planned` aside before a two-way sync replaces or deletes
    /// it (`displace`): into the trash at the job's `moveTarget`, else to a scratch name
    /// that is removed afterwards. Nil when done; else what the job becomes.
    private mutating func displace(_ planned: FileRecord, options: PlanOptions, now: Double) -> Outcome? {
        guard options.mode == .sync, let expected = planned.remote else { return nil }
        var aside = planned.moveTarget
        let current = remote[planned.path]
        // The MOVE never replaces its target: the trash's name may hold what an earlier
        // attempt moved there. While the name still holds the planned version, a taken
        // name sends the move to the next name beside it (`NAME.1`, `NAME.2`, …), as
        // `displace` does.
        if let base = aside, let current, Self.isDisplaced(current.version, expected) {
            var suffix = 0
            while remoteTrashed[aside!] != nil {
                suffix += 1
                aside = base + ".\(suffix)"
            }
        }
        let asideHolds = aside.flatMap { remoteTrashed[$0] }
        // An empty name with the planned version aside is this job's own earlier move (a
        // run cut short after it): the resumed job finds it and goes on.
        let ownEarlierMove = current == nil && asideHolds?.version.map { Self.isDisplaced($0, expected) } == true
        if let aside, let asideHolds, !ownEarlierMove {
            incidents.append("the remote trash's name \(aside) already holds \(asideHolds)")
        }
        if current == nil || asideHolds != nil {
            if let asideHolds, let version = asideHolds.version, Self.isDisplaced(version, expected) {
                // Moved aside by an earlier attempt whose answer was lost.
                if current == nil { return planned.action == .deleteRemote ? .removed : nil }
                return .decidedAgain(decidedAgain(planned, current: current?.version, options: options, now: now,
                                                  message: "another device wrote the remote file since the listing"))
            }
            if current != nil {
                return .decidedAgain(decidedAgain(planned, current: current?.version, options: options, now: now,
                                                  message: "another device wrote the remote file since the listing"))
            }
            // The name is free: the upload goes under it as a new file.
            return planned.action == .deleteRemote ? .removed : nil
        }
        guard let current, Self.isDisplaced(current.version, expected) else {
            return .decidedAgain(decidedAgain(planned, current: current?.version, options: options, now: now,
                                              message: "another device wrote the remote file since the listing"))
        }
        remote[planned.path] = nil
        let moved = ThreeTreeTrashed(path: planned.path, content: current.content, version: current.version)
        if let aside { remoteTrashed[aside] = moved } else { destroyed.append(moved) }
        return nil
    }

    private mutating func upload(_ planned: FileRecord, options: PlanOptions, now: Double) -> Outcome {
        guard let file = local[planned.path] else { return .removed }
        if planned.remote != nil {
            if let instead = displace(planned, options: options, now: now) { return instead }
        } else if let taken = remote[planned.path] {
            // A new name is taken only while it is free (`expectsNewFile`).
            return .decidedAgain(decidedAgain(planned, current: taken.version, options: options, now: now,
                                              message: "another device created the remote file since the listing"))
        }
        if let replaced = remote[planned.path] {
            destroyed.append(ThreeTreeTrashed(path: planned.path, content: replaced.content))
        }
        let version = file.version
        let written = remoteKind.file(content: file.content, size: version.size, time: version.modifiedNanos, write: newWrite())
        remote[planned.path] = written
        var record = planned
        record.markInSync(local: version, remote: written.statVersion, at: now)
        return .saved(record)
    }

    private mutating func download(_ planned: FileRecord, options: PlanOptions, now: Double) -> Outcome {
        guard let expected = planned.remote, let source = remote[planned.path] else { return .removed }
        guard source.version.isSameVersion(as: expected) else {
            return .decidedAgain(decidedAgain(planned, current: source.version, options: options, now: now,
                                              message: "another device wrote the remote file since the listing"))
        }
        let current = local[planned.path]
        switch (current, planned.local) {
        case (nil, nil):
            break
        case let (current?, wanted?) where Self.sameLocal(current.version, wanted):
            break
        default:
            // An earlier attempt put this very download in place (same size, time and bytes).
            if let current, current.content == source.content, current.version.size == source.version.size,
               let time = source.statVersion.modifiedNanos, current.version.modifiedNanos == time {
                var record = planned
                record.markInSync(local: current.version, remote: source.statVersion, at: now)
                return .saved(record)
            }
            return .failed("the local file changed while the remote version was downloading")
        }
        if let current {
            let replaced = ThreeTreeTrashed(path: planned.path, content: current.content)
            if let target = planned.moveTarget, planned.local != nil { moveToLocalTrash(replaced, at: target) } else { destroyed.append(replaced) }
        }
        // The downloaded copy gets the time the download's answer tells (`checkFetched`).
        let fetched = source.statVersion
        let placed = LocalVersion(size: fetched.size, modifiedNanos: fetched.modifiedNanos ?? freshTime(), inode: newInode())
        local[planned.path] = ThreeTreeLocalFile(content: source.content, version: placed)
        var record = planned
        record.markInSync(local: placed, remote: RemoteVersion(size: fetched.size, modifiedNanos: fetched.modifiedNanos,
                                                               etag: fetched.etag ?? expected.etag), at: now)
        return .saved(record)
    }

    private mutating func deleteRemote(_ planned: FileRecord, options: PlanOptions, now: Double) -> Outcome {
        if planned.remote != nil && options.mode == .sync {
            return displace(planned, options: options, now: now) ?? .removed
        }
        if let gone = remote.removeValue(forKey: planned.path) {
            destroyed.append(ThreeTreeTrashed(path: planned.path, content: gone.content))
        }
        return .removed
    }

    /// `LocalFolder.moveToTrash`: never over what the trash holds; a taken name gets `.1`,
    /// `.2`, … appended.
    private mutating func moveToLocalTrash(_ file: ThreeTreeTrashed, at target: String) {
        var name = target
        var suffix = 0
        while localTrashed[name] != nil {
            suffix += 1
            name = target + ".\(suffix)"
        }
        localTrashed[name] = file
    }

    private mutating func deleteLocal(_ planned: FileRecord) -> Outcome {
        guard let current = local[planned.path] else { return .removed }
        if let expected = planned.local, !Self.sameLocal(current.version, expected) {
            return .failed("the local file changed since the plan; not deleting it")
        }
        local[planned.path] = nil
        let gone = ThreeTreeTrashed(path: planned.path, content: current.content)
        if let target = planned.moveTarget { moveToLocalTrash(gone, at: target) } else { destroyed.append(gone) }
        return .removed
    }

    /// A MOVE on the remote that never replaces its target; false when the source is not there.
    private mutating func moveOnRemote(from source: String, to target: String) -> Result<Bool, ThreeTreeRefusal> {
        guard let file = remote[source] else { return .success(false) }
        guard remote[target] == nil else { return .failure(ThreeTreeRefusal(message: "the MOVE's target \(target) is taken")) }
        remote[target] = file
        remote[source] = nil
        return .success(true)
    }

    private mutating func moveRemote(_ planned: FileRecord, now: Double) -> Outcome {
        guard let target = planned.moveTarget else { return .removed }
        switch moveOnRemote(from: planned.path, to: target) {
        case let .failure(refusal): return .failed(refusal.message)
        case .success(false) where remote[target] == nil: return .removed
        case .success: break
        }
        guard var moved = journal[target], let movedLocal = moved.local, let entry = remote[target] else { return .removed }
        moved.markInSync(local: movedLocal, remote: entry.statVersion, at: now)
        return .moved(saved: [moved], removed: [planned.path], next: [])
    }


    private mutating func keepBothLocalLoses(_ planned: FileRecord, options: PlanOptions, now: Double) -> Outcome {
        guard let target = planned.moveTarget, let expected = planned.local else { return .removed }
        let renamed: ThreeTreeLocalFile
        if let current = local[planned.path] {
            guard Self.sameLocal(current.version, expected) else {
                return .failed("the local file changed since the plan; it will be looked at again")
            }
            guard local[target] == nil else { return .failed("the conflict copy's name \(target) is taken") }
            local[target] = current
            local[planned.path] = nil
            renamed = current
        } else if let already = local[target] {
            renamed = already
        } else {
            return .removed
        }
        var winner = planned
        winner.local = nil
        winner.startOver(waitingFor: .download, at: now)
        var loser = FileRecord(pairId: planned.pairId, path: target, queue: planned.queue, status: .needsUpload, updatedAt: now)
        loser.action = .upload
        loser.local = renamed.version
        if options.mode == .pull {
            loser.keepLocalOnly()
            return .moved(saved: [winner, loser], removed: [], next: [winner])
        }
        return .moved(saved: [winner, loser], removed: [], next: [winner, loser])
    }

    private mutating func keepBothRemoteLoses(_ planned: FileRecord, now: Double) -> Outcome {
        guard let target = planned.moveTarget else { return .removed }
        switch moveOnRemote(from: planned.path, to: target) {
        case let .failure(refusal): return .failed(refusal.message)
        case .success(false) where remote[target] == nil: return .removed
        case .success: break
        }
        guard let entry = remote[target] else { return .removed }
        var winner = planned
        winner.remote = nil
        winner.startOver(waitingFor: .upload, at: now)
        var loser = FileRecord(pairId: planned.pairId, path: target, queue: planned.queue, status: .needsDownload, updatedAt: now)
        loser.action = .download
        loser.remote = entry.statVersion
        return .moved(saved: [winner, loser], removed: [], next: [winner, loser])
    }

    /// The executor reads both copies: equal bytes are in sync; different ones are decided
    /// again as if their times had differed (`compareContent`).
    private func compareContent(_ planned: FileRecord, options: PlanOptions, now: Double) -> Outcome {
        guard let wantedLocal = planned.local, let wantedRemote = planned.remote, let remoteFile = remote[planned.path],
              let localFile = local[planned.path], Self.sameLocal(localFile.version, wantedLocal) else { return .removed }
        if localFile.content == remoteFile.content {
            var record = planned
            record.markInSync(local: wantedLocal, remote: wantedRemote, at: now)
            return .compared(record, equal: true)
        }
        let decision = Planner.decideDiffering(planned, options: options, reason: nil)
        var record = planned
        switch decision {
        case .transfer, .delete, .move, .conflict:
            record = Planner.applying(decision, to: planned, options: options, now: planned.updatedAt)
        case .inSync, .adopt, .localOnly, .remoteOnly, .forget:
            record.markConflict(reason: Planner.contentDiffersNote)
        }
        return .compared(record, equal: false)
    }
}

/// A remote MOVE refused because its target is taken.
struct ThreeTreeRefusal: Error {
    var message: String
}

extension ThreeTreeLocalFile {
    var describedVersion: String {
        "(\(version.size) B, \(ThreeTreeWorld.time(version.modifiedNanos)), inode \(version.inode))"
    }
}

extension ThreeTreeRemoteFile {
    var describedVersion: String {
        "(\(version.size) B, \(version.modifiedNanos.map(ThreeTreeWorld.time) ?? "no time")\(version.etag.map { ", ETag \($0)" } ?? ""))"
    }
}

extension ThreeTreeWorld {
    /// A time as seconds after the scenario's t0, to the nanosecond.
    static func time(_ nanos: Int64) -> String {
        let offset = nanos - ThreeTreeScenario.t0
        let seconds = offset / ThreeTreeScenario.second
        let fraction = offset % ThreeTreeScenario.second
        guard fraction != 0 else { return "t+\(seconds)s" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 9 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "t+\(seconds).\(digits)s"
    }
}
