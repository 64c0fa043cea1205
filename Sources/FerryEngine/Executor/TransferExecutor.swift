import FerryConfig
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

/// Carries out one attempt of one job, with the journal bookkeeping around it: a large file
/// is marked `uploading`/`downloading` (with the source version its partial bytes belong
/// to) before any byte moves, through the run's one journal writer. The result (the `inSync`
/// row, or the row to drop) goes back to the engine, which commits results in groups: one
/// transaction per file was half of a small-file push's time.
package struct TransferExecutor: Sendable {
    enum Success: Sendable {
        /// The file arrived; the record (now `inSync`) is still to be written.
        case transferred(FileRecord, bytes: Int64, resumedFrom: Int64)
        /// The file was written under its temporary name and waits for the engine to publish
        /// it with others (`StagedUploadBackend`); the record (`inSync` once published) is
        /// still to be written.
        case staged(FileRecord, StagedUpload)
        /// The file was downloaded into its partial file and waits for the engine to flush
        /// it with others and put it in place (`placeFetched`).
        case fetched(FetchedDownload)
        /// The target copy was deleted (or moved into the trash); the row is still to be dropped.
        case deleted(trashed: Bool)
        /// A file was renamed on one side (two-way sync): rows to write (the first is the
        /// job's own outcome), rows to drop, and the transfers that follow in this run.
        case moved(saved: [FileRecord], removed: [String], next: [FileRecord])
        /// The source disappeared before the transfer; the row is still to be dropped.
        case vanished
        /// Look-alike copies were read and compared: the record is still to be written. With
        /// equal bytes it is in sync; else it is a conflict, or planned again for the job
        /// that follows in this run.
        case compared(FileRecord, equal: Bool)
        /// The remote file was not the version the plan saw when the job came to write it
        /// (another device wrote it meanwhile): the record, decided again, is still to be
        /// written, and its job (if any) follows in this run.
        case decidedAgain(FileRecord)
    }

    package enum Failure: Error, Sendable {
        case backend(BackendError)
        case journal(JournalError)
    }

    package let pair: FolderPair
    /// The pair's local folder and trash, written only through anchored calls.
    package let local: LocalFolder
    /// For reads; the executor's writes (its marks) go through `writer`.
    package let journal: Journal
    package let writer: RunJournalWriter
    /// The run's clock: its wall time stamps what the journal records.
    package let clock: any FerryClock
    /// What downloads leave free on the local disk.
    package var freeSpaceReserve: FreeSpaceReserve = .standard
    /// How the run plans: a comparison that finds different bytes decides again with it.
    package var planOptions: PlanOptions
    /// The largest look-alike copy that is read and compared (`transfers.compare_max_size`).
    package var compareMaxSize: Int64 = 1 << 30
    /// This device's part of temporary upload names (`UploadRequest.temporaryTag`): set for
    /// two-way sync, where other devices write the same remote folder, and for a push into
    /// a folder that keeps every version.
    package var temporaryTag: String?
    /// The write lease this run holds (`WriteLease`), on a store that needs one: a job that
    /// writes to the remote starts only while it is held.
    package var writeLease: WriteLeaseKeeper?
    /// Modification times the remote catalog keeps for a store that keeps none, by the
    /// remote's path (`KeptFileTime`): a download is given its file's, not the upload's.
    package var keptTimes: [String: KeptFileTime] = [:]

    package init(pair: FolderPair, local: LocalFolder, journal: Journal, writer: RunJournalWriter, clock: any FerryClock,
                 freeSpaceReserve: FreeSpaceReserve = .standard, planOptions: PlanOptions, compareMaxSize: Int64 = 1 << 30,
                 temporaryTag: String? = nil, writeLease: WriteLeaseKeeper? = nil, keptTimes: [String: KeptFileTime] = [:]) {
        self.pair = pair
        self.local = local
        self.journal = journal
        self.writer = writer
        self.clock = clock
        self.freeSpaceReserve = freeSpaceReserve
        self.planOptions = planOptions
        self.compareMaxSize = compareMaxSize
        self.temporaryTag = temporaryTag
        self.writeLease = writeLease
        self.keptTimes = keptTimes
    }

    /// Files at least this large are marked `uploading`/`downloading` (with the version
    /// their partial bytes belong to) before the transfer, so they can be continued.
    /// Smaller ones are flushed in batches, and their queue's cap does not count them
    /// (`SchedulerState`).
    static let resumableSize: Int64 = 1 << 20

    /// A write refused because this device's write lease on the remote was lost (`loss`).
    static func leaseLost(_ loss: String, path: String) -> Failure {
        .backend(BackendError(.cancelled, loss + "; this device stopped writing to the remote: run the sync again", path: path))
    }

    func attempt(_ record: FileRecord, observer: JobObserver) async -> Result<Success, Failure> {
        if let writeLease, Self.writesRemote(record.action), let loss = await writeLease.loss() {
            return .failure(Self.leaseLost(loss, path: record.path))
        }
        return await Self.outcome(of: record) { () async throws -> Success in
            switch record.action {
            case .upload: return try await decidingAgainOnChange(record) { try await upload(record, observer: observer) }
            case .download: return try await decidingAgainOnChange(record) { try await download(record, observer: observer) }
            case .deleteRemote: return try await decidingAgainOnChange(record) { try await deleteRemote(record) }
            case .deleteLocal: return try await deleteLocal(record)
            case .moveRemote: return try await decidingAgainOnChange(record) { try await moveRemote(record) }
            case .keepBothLocalLoses: return try await keepBothLocalLoses(record)
            case .keepBothRemoteLoses: return try await keepBothRemoteLoses(record)
            case .compareContent: return try await compareContent(record, observer: observer)
            case nil: return .vanished
            }
        }
    }

    /// Whether a job of `action` may write to the remote (a download decided again may
    /// upload a conflict copy).
    static func writesRemote(_ action: FileAction?) -> Bool {
        action != nil && action != .deleteLocal
    }

    /// `body`, or the file decided again when it found the remote no longer the version the
    /// plan saw: moved aside and compared (`displace`), or a new name another writer took
    /// first (`expectsNewFile` refused).
    func decidingAgainOnChange(_ planned: FileRecord, _ body: () async throws -> Success) async throws -> Success {
        do {
            let success = try await body()
            // A download whose remote file is gone, while this device holds a version: the
            // other device may be moving it aside for a moment, or deleted it. Dropping the
            // row would make the local copy look new to the next sync (a conflict copy of
            // a version nobody changed); deciding again keeps the last sync's view.
            if case .vanished = success, planned.action == .download, planned.local != nil {
                return .decidedAgain(decidedAgain(planned, because: RemoteChangedSincePlan(
                    current: try await pair.backend.stat(try remotePath(planned)),
                    message: "the remote file was moved or deleted since the listing")))
            }
            return success
        } catch let change as RemoteChangedSincePlan {
            if planned.action == .deleteRemote, change.current == nil { return .deleted(trashed: false) }
            return .decidedAgain(decidedAgain(planned, because: change))
        } catch let error as BackendError where error.code == .alreadyExists && planned.action == .upload {
            guard let decided = try await decidedAgain(planned, refusedWith: error) else { throw error }
            return decided
        } catch let error as BackendError where error.code == .changedDuringTransfer && planned.action == .download {
            return try await decidedAgain(planned, changedDuringDownload: error)
        }
    }

    /// A download whose bytes were not the listed version's (`changedDuringTransfer`),
    /// decided again when another device wrote the file after the listing: fetching the
    /// listed version again would fail the same way on every retry. Throws `error` when the
    /// remote is still the listed version (the local file changed, or the bytes were bad).
    func decidedAgain(_ planned: FileRecord, changedDuringDownload error: BackendError) async throws -> Success {
        let current = try await pair.backend.stat(try remotePath(planned))
        if let current, let listed = planned.remote, current.kind == .file, RemoteVersion(current).isSameVersion(as: listed) {
            throw error
        }
        return .decidedAgain(decidedAgain(planned, because: RemoteChangedSincePlan(
            current: current, message: "another device wrote the remote file since the listing")))
    }

    /// What `body` came to, its error sorted into the journal's or the backend's.
    static func outcome(of record: FileRecord, _ body: () async throws -> Success) async -> Result<Success, Failure> {
        do {
            return .success(try await body())
        } catch let error as Failure {
            return .failure(error)
        } catch let error as BackendError {
            return .failure(.backend(error))
        } catch let error as JournalError {
            return .failure(.journal(error))
        } catch {
            return .failure(.backend(BackendError(.io, "\(error)", path: record.path)))
        }
    }

    private func now() -> Double { currentTime() }

    func currentTime() -> Double { clock.wallTime() }

    /// The file on the remote, as the remote spells its name (`FileRecord.remoteSpelling`).
    package func remotePath(_ record: FileRecord) throws -> RelativePath {
        pair.remoteRoot.appending(try RelativePath(record.remoteSpelling ?? record.path))
    }

    package func localPath(_ record: FileRecord) -> String {
        LocalFileSystem.join(pair.localRoot, record.path)
    }

    private func upload(_ planned: FileRecord, observer: JobObserver) async throws -> Success {
        let trip = try firstTrip(for: planned)
        let (meta, sent) = try await BlockingIO.run { () throws(BackendError) in try trip.run(observer: observer) }
        return try await finishUpload(planned, meta: meta, sent: sent, observer: observer)
    }

    /// The first trip of an upload to a blocking thread: a look at the source, and for a
    /// small file's first attempt, with nothing to look at or move aside first, the send
    /// or the staging too, on a backend that can do either from there.
    struct FirstTrip: Sendable {
        package typealias Outcome = (meta: FileMetadata?, sent: (UploadResult, StagedUpload?)?)
        package let planned: FileRecord
        package let source: String
        package let destination: RelativePath
        package let direct: (any DirectUploadBackend)?
        package let stager: (any StagedUploadBackend)?
        let sentLimit: Int64
        package let temporaryTag: String?
        /// `TransferExecutor.guardsNewNames`.
        let guardsNewNames: Bool

        /// Runs on a blocking thread. No metadata: the source is gone or not a file; no
        /// sending: the file goes the usual way (`send`).
        package func run(observer: JobObserver) throws(BackendError) -> Outcome {
            let (meta, request) = try look()
            guard let meta, let request else { return (meta, nil) }
            if let direct { return (meta, try direct.uploadNow(request, observer: observer).map { ($0, nil) }) }
            return (meta, try stager?.stageNow(request, observer: observer).map { ($0.result, $0) })
        }

        /// The source's metadata (nil: gone or not a file) and, when this trip is to send or
        /// stage the file, the request that does.
        package func look() throws(BackendError) -> (meta: FileMetadata?, request: UploadRequest?) {
            guard let meta = try BackendError.catching({ try LocalFileSystem.metadata(source) }), meta.kind == .file else { return (nil, nil) }
            guard meta.size < sentLimit else { return (meta, nil) }
            var request = UploadRequest(source: source, destination: destination, size: meta.size, modifiedNanos: meta.modifiedNanos,
                                        mayResume: false, expectsNewFile: guardsNewNames && planned.remote == nil)
            request.temporaryTag = temporaryTag
            return (meta, request)
        }
    }

    func firstTrip(for planned: FileRecord) throws -> FirstTrip {
        let (direct, stager) = firstTripRoute(for: planned)
        let sentLimit = direct.map { min($0.directUploadLimit, Self.resumableSize) } ?? (stager == nil ? 0 : Self.resumableSize)
        return FirstTrip(planned: planned, source: localPath(planned), destination: try remotePath(planned),
                         direct: direct, stager: stager, sentLimit: sentLimit, temporaryTag: temporaryTag,
                         guardsNewNames: guardsNewNames)
    }

    /// Whether an upload to a name the listing showed free takes it only while it is still
    /// free (`UploadRequest.expectsNewFile`): where another device's version there must be
    /// kept (a two-way sync, a folder that keeps versions). A plain push replaces what it
    /// finds: a refused name would only be decided again into the same upload
    /// (`Planner`, push), at the cost of a round trip more per file on a server that
    /// honours no condition on a PUT (nginx: a temporary name and a MOVE).
    var guardsNewNames: Bool { planOptions.mode == .sync || pair.savesVersions }

    /// Which backend sends or stages the file in the first trip, if any does.
    func firstTripRoute(for planned: FileRecord) -> (direct: (any DirectUploadBackend)?, stager: (any StagedUploadBackend)?) {
        guard !(Self.mayHaveLanded(planned) || Self.leftPartial(planned)),
              !(pair.savesVersions && planned.remote != nil),
              (try? displacementTarget(for: planned)) == nil else {
            return (nil, nil)
        }
        return firstTripBackend
    }

    /// Whether the backend sends a small file's first attempt from a blocking thread, or
    /// stages it there, or neither.
    var firstTripBackend: (direct: (any DirectUploadBackend)?, stager: (any StagedUploadBackend)?) {
        // A wrapper (encryption) is both; what it wraps decides which one sends.
        if let direct = pair.backend as? any DirectUploadBackend, direct.directUploadLimit > 0 { return (direct, nil) }
        return (nil, pair.backend as? any StagedUploadBackend)
    }

    /// The rest of an upload after its first trip.
    func finishUpload(_ planned: FileRecord, meta: FileMetadata?, sent: (UploadResult, StagedUpload?)?,
                      observer: JobObserver) async throws -> Success {
        let source = localPath(planned)
        let destination = try remotePath(planned)
        guard let meta else { return .vanished }
        let version = LocalVersion(size: meta.size, modifiedNanos: meta.modifiedNanos, inode: Int64(bitPattern: meta.inode))
        var record = planned
        let result: UploadResult
        var staged: StagedUpload?
        if let sent {
            record.beginUpload(of: version, at: now())
            (result, staged) = sent
        } else {
            switch try await send(planned, version: version, source: source, destination: destination, into: &record, observer: observer) {
            case let .alreadyThere(landed):
                record.markInSync(local: version, remote: landed, at: now(), localChangedNanos: meta.changedNanos)
                return .transferred(record, bytes: 0, resumedFrom: version.size)
            case let .sent(sentResult, stagedUpload):
                result = sentResult
                staged = stagedUpload
            }
        }
        let remote = RemoteVersion(result.entry)
        // The status-change time read before the upload: an edit in place while it was
        // sent moves it, and eviction then does not take the file for the sent one.
        record.markInSync(local: version, remote: remote, at: now(), localChangedNanos: meta.changedNanos)

        // The backend checked the source up to the rename; a change after that leaves a
        // complete copy of the old version, and the new version must go too. A backend
        // that proved the stored bytes are this version saves the trip to look (a third of
        // a small file's trips to a blocking thread).
        let after = result.verifiedSource
            ? nil : try await BlockingIO.run { () throws(BackendError) in try local.metadata(planned.path) }
        if let after, !(after.size == version.size && after.modifiedNanos == version.modifiedNanos) {
            record.changedDuringUpload(to: LocalVersion(size: after.size, modifiedNanos: after.modifiedNanos,
                                                        inode: Int64(bitPattern: after.inode)))
            try await writer.markNow(record)
            throw BackendError(.changedDuringTransfer, "the file changed while it was being sent; it will be sent again", path: planned.path)
        }
        if let staged { return .staged(record, staged) }
        return .transferred(record, bytes: result.bytesSent, resumedFrom: result.resumedFrom)
    }

    /// What sending a file the usual way came to.
    private enum Sending {
        /// An earlier attempt's copy was found on the remote: nothing was sent.
        case alreadyThere(RemoteVersion)
        case sent(UploadResult, staged: StagedUpload?)
    }

    /// Sends `version` of the planned file the usual way: a retry first looks for what an
    /// earlier attempt left, a two-way sync moves the replaced remote version aside, and a
    /// large file is marked so it can be continued.
    private func send(_ planned: FileRecord, version: LocalVersion, source: String, destination: RelativePath,
                      into record: inout FileRecord, observer: JobObserver) async throws -> Sending {
        // Continue an earlier partial upload only if it was made from this very version.
        let mayResume = planned.transferLocal == version
        // Look before sending the file again.
        if Self.mayHaveLanded(planned), let landed = try await alreadyUploaded(version, to: destination, replacing: planned.remote) {
            // A later attempt may have left its temporary file before failing (a lost
            // MOVE answer, then a re-sent PUT whose MOVE failed): it is garbage now.
            if pair.rights.mayDelete, let parent = destination.parent,
               let temporary = try? parent.appending(TemporaryName.for(destination.name, tag: temporaryTag)) {
                try? await pair.backend.delete(temporary)
            }
            return .alreadyThere(landed)
        }
        let aside = try displacementTarget(for: planned)
        var displaced: RelativePath?
        if let aside { displaced = try await displace(planned, to: aside.path) }
        let keeping = try await keepReplacedVersion(planned)
        record.beginUpload(of: version, at: now())
        // The mark exists so an interrupted transfer can be continued; a small file is
        // simply sent again, and its job is already on disk as needsUpload, so the extra
        // transaction per file (half the journal's work on small files) is skipped.
        let resumable = version.size >= Self.resumableSize
        if resumable { try await writer.markNow(record) }

        // The checkpoint of an earlier attempt goes back even for another version: the
        // backend then discards the upload it names.
        var request = UploadRequest(source: source, destination: destination, size: version.size,
                                    modifiedNanos: version.modifiedNanos, mayResume: mayResume,
                                    expectsNewFile: (guardsNewNames && planned.remote == nil) || aside != nil
                                        || keeping == .movedAside,
                                    resumeState: planned.transferState)
        request.temporaryTag = temporaryTag
        request.followsEarlierAttempt = Self.mayHaveLanded(planned) || Self.leftPartial(planned)
        if case let .copied(replacedETag) = keeping { request.replacedETag = replacedETag }
        // A small file on a backend that flushes per file waits to be flushed with others;
        // a large one (marked, resumable) goes on its own, and so does one that an earlier
        // upload left partly sent (`leftPartial`).
        // A displaced version's scratch copy is removed once the new one is in place, and
        // a name emptied for a new version is filled at once: such an upload is not left
        // to a later batch.
        if !resumable, !Self.leftPartial(planned), aside == nil, keeping == .none, let stager = pair.backend as? any StagedUploadBackend,
           let written = try await stager.stageUpload(request, observer: observer) {
            return .sent(written.result, staged: written)
        }
        let sent = try await pair.backend.upload(
            request, observer: resumable ? CheckpointingObserver(job: observer, marked: record, writer: writer) : observer)
        await dropDisplaced(displaced, isTrash: aside?.isTrash ?? true)
        return .sent(sent, staged: nil)
    }

    /// An earlier attempt may have reached the server although its answer was lost (a
    /// dropped connection after the MOVE, a kill before the result was recorded).
    private static func mayHaveLanded(_ planned: FileRecord) -> Bool {
        planned.attempts > 0 || planned.status == .uploading || planned.lastError != nil
    }

    /// An interrupted upload left part of a file under its temporary name (or, on S3, an
    /// unfinished multipart upload): sent the usual way, the upload writes over it or
    /// discards it. A staged upload is named in place and would leave it behind for good,
    /// which happened when a large file was killed half-way and then shrank below the
    /// resumable size.
    private static func leftPartial(_ planned: FileRecord) -> Bool {
        planned.transferLocal != nil
    }

    /// The remote copy when it is this very version of the source (same size, and the
    /// modification time the upload gave it), or nil when it has to be sent. The version
    /// the upload was to replace is never taken for it: after a re-decision that is
    /// another device's write, which can have the same size and, from a coarse clock, the
    /// same time.
    private func alreadyUploaded(_ version: LocalVersion, to destination: RelativePath,
                                 replacing replaced: RemoteVersion?) async throws -> RemoteVersion? {
        guard let entry = try await pair.backend.stat(destination), entry.kind == .file else { return nil }
        let remote = RemoteVersion(entry)
        if let replaced, remote.isSameVersion(as: replaced) { return nil }
        return remote.matches(version) ? remote : nil
    }

    private func deleteRemote(_ planned: FileRecord) async throws -> Success {
        if let aside = try displacementTarget(for: planned) {
            let displaced = try await displace(planned, to: aside.path)
            await dropDisplaced(displaced, isTrash: aside.isTrash)
            return .deleted(trashed: aside.isTrash && displaced != nil)
        }
        try await pair.backend.delete(try remotePath(planned))
        return .deleted(trashed: false)
    }

    private func deleteLocal(_ planned: FileRecord) async throws -> Success {
        let relative = planned.path
        let target = localPath(planned)
        let expected = planned.local
        let trashTarget = planned.moveTarget
        let local = self.local
        try await BlockingIO.run { () throws(BackendError) in
            guard let current = try local.metadata(relative) else { return }
            if let expected, current.size != expected.size || current.modifiedNanos != expected.modifiedNanos {
                throw BackendError(.changedDuringTransfer, "the local file changed since the plan; not deleting it",
                                   path: target, retryable: false)
            }
            if let trashTarget {
                try local.moveToTrash(relative, target: trashTarget)
            } else {
                try BackendError.catching { try local.root.removeFile(relative) }
            }
        }
        return .deleted(trashed: trashTarget != nil)
    }
}
