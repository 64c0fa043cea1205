import FerryPlanning
import FerryPluginAPI

/// Two-way sync replaces or deletes a remote file only while it is the version the plan
/// saw. Several devices sync one remote folder, and another device may write the same name
/// between this device's listing and its write; an unconditional write would then replace
/// that device's version, and nobody would hear of it.
///
/// Most servers offer no condition on a replacing write (nginx ignores `If-Match`, a local
/// disk has none), but every one moves a file in one step. So the version under the name is
/// first moved aside (into the run's trash, or to a hidden name beside it when the trash is
/// off), where no other writer changes it, and what was moved is compared with the planned
/// version:
/// - the same: the write goes on, and puts the new version under the now free name only
///   while it is free (`UploadRequest.expectsNewFile`: `Overwrite: F`, `If-None-Match: *`,
///   a rename that refuses a taken name);
/// - another version: it is put back, and the file is decided again from what the remote
///   holds now (`RemoteChangedSincePlan`), which makes it a conflict rather than a loss.
extension TransferExecutor {
    /// The remote file is no longer the version the plan saw; `current` is what is there now.
    struct RemoteChangedSincePlan: Error {
        package var current: RemoteEntry?
        package var message: String

        /// How a record decided again says so in `lastError`: the count of re-decisions in
        /// a row is `attempts` only while it does (a failed retry in between starts over).
        package static let note = "decided again: "
    }

    /// Where the planned remote version of `planned` goes before a two-way sync replaces or
    /// deletes it: its place in the run's trash, or, with the trash off, a hidden scratch
    /// name of this device's beside it (removed once the write is done). Nil when nothing is to be displaced.
    func displacementTarget(for planned: FileRecord) throws -> (path: RelativePath, isTrash: Bool)? {
        guard planOptions.mode == .sync, planned.remote != nil else { return nil }
        // The replaced version goes into the versions folder instead (`keepReplacedVersion`).
        if pair.savesVersions, planned.action == .upload { return nil }
        if let target = planned.moveTarget, planned.action != .moveRemote {
            return (pair.trash.remoteFolder(root: pair.remoteRoot).appending(try RelativePath(target)), true)
        }
        let destination = try remotePath(planned)
        guard let parent = destination.parent else { return nil }
        return (try parent.appending(TemporaryName.for(destination.name + Self.displacedMarker, tag: temporaryTag)), false)
    }

    static let displacedMarker = ".ferry-replaced"

    /// Moves the planned remote version of `planned` to `aside`, or beside it (`aside.1`,
    /// `aside.2`, …) when `aside` is taken (a job resumed after a kill keeps the trash name
    /// its first attempt filled), and returns where it went. Throws
    /// `RemoteChangedSincePlan` (having put back whatever it moved) when the name held
    /// another version, or nothing while no aside name holds the planned version either.
    /// An earlier attempt that moved the planned version already counts as done. Nil when
    /// the name is empty and nothing is aside (another device deleted the file): the name
    /// is free, and what deciding the file again would make of that is what the job does
    /// anyway (an upload goes under the free name as a new file; a deletion is done).
    package func displace(_ planned: FileRecord, to aside: RelativePath) async throws -> RelativePath? {
        guard let expected = planned.remote else { return aside }
        let name = try remotePath(planned)
        var target = aside
        var suffix = 0
        while let refusal = await moveRefusal(from: name, to: target) {
            switch refusal.code {
            case .notFound:
                // Nothing under the name: moved aside by an earlier attempt whose answer was
                // lost, or deleted by another device.
                if let moved = try await pair.backend.stat(target), moved.kind == .file {
                    if Self.isDisplaced(moved, expected) { return target }
                    // Another version aside and none under the name: an earlier attempt moved
                    // another device's version aside and failed to put it back. Taken for a
                    // deletion, the file would be uploaded over the free name, and that
                    // version left in this device's trash only.
                    try await putBack(target, to: name, planned: planned)
                    throw RemoteChangedSincePlan(current: try await pair.backend.stat(name),
                                                 message: "another device wrote the remote file since the listing")
                }
                guard let current = try await pair.backend.stat(name) else { return nil }
                throw RemoteChangedSincePlan(current: current, message: "another device wrote the remote file since the listing")
            case .alreadyExists:
                // The aside name is taken (by what an earlier attempt moved there). While the
                // name still holds the planned version, the next name beside it is tried;
                // another version under the name is another writer's.
                let current = try await pair.backend.stat(name)
                guard let current, Self.isDisplaced(current, expected) else {
                    throw RemoteChangedSincePlan(current: current, message: "another device wrote the remote file since the listing")
                }
                suffix += 1
                guard suffix <= Self.maxAsideSuffix, let parent = aside.parent else { throw refusal }
                target = try parent.appending(aside.name + ".\(suffix)")
            default:
                throw refusal
            }
        }
        guard let moved = try await pair.backend.stat(target), moved.kind == .file else {
            throw RemoteChangedSincePlan(current: try await pair.backend.stat(name),
                                         message: "the remote file vanished while it was moved aside")
        }
        if Self.isDisplaced(moved, expected) { return target }
        try await putBack(target, to: name, planned: planned)
        throw RemoteChangedSincePlan(current: moved, message: "another device wrote the remote file since the listing")
    }

    static let maxAsideSuffix = 99

    /// Whether `moved` is the planned version: same size, and the same ETag, or (a store
    /// whose copy makes a new ETag, S3's move) the same modification time.
    package static func isDisplaced(_ moved: RemoteEntry, _ expected: RemoteVersion) -> Bool {
        let version = RemoteVersion(moved)
        if version.isSameVersion(as: expected) { return true }
        guard moved.size == expected.size, let time = moved.modifiedNanos, let expectedTime = expected.modifiedNanos else {
            return false
        }
        return time == expectedTime
    }

    /// Puts another device's version, moved aside by mistake, back under its name; if yet
    /// another version took the name meanwhile, under a conflict copy's name instead, so
    /// that no version is lost either way.
    func putBack(_ aside: RelativePath, to name: RelativePath, planned: FileRecord) async throws {
        guard let refusal = await moveRefusal(from: aside, to: name) else { return }
        guard refusal.code == .alreadyExists else { throw refusal }
        let copy = planOptions.sync?.conflictPath(for: planned.path) ?? planned.path + ".conflict"
        try await pair.backend.move(from: aside, to: pair.remoteRoot.appending(try RelativePath(copy)), overwrite: false)
    }

    /// A MOVE that never replaces its target; nil when it was done, else why not.
    func moveRefusal(from source: RelativePath, to target: RelativePath) async -> BackendError? {
        do {
            try await pair.backend.move(from: source, to: target, overwrite: false)
            return nil
        } catch {
            return error
        }
    }

    /// Removes a hidden scratch copy (`displaced`, where `displace` put it) once the write
    /// that displaced it is done; left behind (a failure here), it is a hidden file no
    /// listing shows, not a lost or extra version. A version in the trash stays.
    func dropDisplaced(_ displaced: RelativePath?, isTrash: Bool) async {
        guard let displaced, !isTrash else { return }
        try? await pair.backend.delete(displaced)
    }

    /// The file decided again from what the remote holds now, for the job that follows in
    /// this run: a conflict when this device changed it too, a download when only the
    /// other device did. A file that keeps changing under this device's writes is left as
    /// a conflict after a few tries rather than raced forever.
    func decidedAgain(_ planned: FileRecord, because change: RemoteChangedSincePlan) -> FileRecord {
        var record = planned
        record.remote = change.current.flatMap { $0.kind == .file ? RemoteVersion($0) : nil }
        let tries = Self.redecisions(of: planned) + 1
        guard tries <= Self.maxRedecisions else {
            record.markConflict(reason: "the remote copy kept changing while this device wrote it; "
                + "run ferry resolve \(planned.path) --keep local|remote|both")
            return record
        }
        let options = redecisionOptions(tries: tries)
        record = Planner.applying(Planner.decideAgain(record, options: options), to: record, options: options, now: currentTime())
        if record.action != nil {
            record.noteRedecision(tries, reason: RemoteChangedSincePlan.note + change.message)
        }
        return record
    }

    static let maxRedecisions = 5

    /// How many times in a row this run decided the file again (0: it is as planned).
    static func redecisions(of record: FileRecord) -> Int {
        record.lastError?.hasPrefix(RemoteChangedSincePlan.note) == true ? record.attempts : 0
    }

    /// The plan options of the `tries`th decision again. Decided again, the file may be kept
    /// both ways a second time in this run (its plan renamed the remote loser, then another
    /// device wrote the name again): the names of a re-decision carry its try after the
    /// host, so that its loser never takes the conflict name the first loser has.
    func redecisionOptions(tries: Int) -> PlanOptions {
        guard tries > 0 else { return planOptions }
        var options = planOptions
        options.sync?.host += "-\(tries + 1)"
        return options
    }

    /// An upload that found the name taken by another writer (`refusal`, from the upload
    /// itself or from publishing a staged batch: a new name, or one emptied for the new
    /// version), decided again from what is there now; nil when the refusal was something
    /// else (a folder in the way of the file, a file in the way of one of its folders).
    /// Throws when the look at what is there fails, and when the name is empty again by
    /// then: another device is replacing the file (its version moved aside, its own on the
    /// way), and deciding on the empty name would take that for a deletion; the attempt is
    /// made again (a retryable error) once it is done.
    func decidedAgain(_ planned: FileRecord, refusedWith refusal: BackendError) async throws -> Success? {
        guard planned.action == .upload, refusal.code == .alreadyExists else { return nil }
        let name = try remotePath(planned)
        guard let current = try await pair.backend.stat(name) else {
            // The name is empty because it cannot be made: no other device's write is in
            // progress there, and trying again would only meet the same file.
            if try await fileInTheWay(of: name) { return nil }
            throw BackendError(.alreadyExists, "another device is replacing the remote file at this moment; trying again",
                               path: name.description, retryable: true)
        }
        guard current.kind == .file else { return nil }
        return .decidedAgain(decidedAgain(planned, because: RemoteChangedSincePlan(
            current: current, message: "another device wrote the remote file since the listing")))
    }

    /// Whether a file stands where one of `name`'s folders should be.
    private func fileInTheWay(of name: RelativePath) async throws -> Bool {
        var folder = name.parent
        while let current = folder, !current.isRoot {
            if let entry = try await pair.backend.stat(current) { return entry.kind != .directory }
            folder = current.parent
        }
        return false
    }
}
