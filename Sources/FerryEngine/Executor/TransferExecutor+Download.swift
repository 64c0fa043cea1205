import FerryConfig
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

/// A download written in full into its partial file, waiting to be checked (identity,
/// size, time), flushed with others and put in place under its name. A small file is not
/// flushed on its own: an `fsync` per file was most of a pull of small files, and the
/// engine flushes a batch at once (`TransferExecutor.placeFetched`) before any rename.
struct FetchedDownload: Sendable {
    /// The job's row, marked as downloading; `inSync` once the file is in place.
    package var record: FileRecord
    package var relative: String
    package var partial: String
    /// The partial file as created: it must still be the same file when put in place.
    package var partialFile: FileMetadata
    /// The partial file when it was made with no name (`PartialDownload.unnamed`): it is
    /// named only when put in place.
    package var unnamed: OpenFile?
    /// The local version the download replaces (nil: none), as planned.
    package var expectedLocal: LocalVersion?
    /// Two-way sync: where that local version goes in the local trash.
    var trashTarget: String?
    package var result: DownloadResult
    /// The remote version as listed, for what the download's answer left out (its ETag).
    package var remote: RemoteVersion
}

/// A download's partial file as its first trip left it: the bytes already in it, and the
/// file as made (it must still be the same file when put in place).
struct PartialDownload: Sendable {
    package var offset: Int64
    package var file: FileMetadata
    /// A new small file's partial file, made with no name in its folder (`O_TMPFILE`) and
    /// open for writing: named once, under its final name, where a partial name made and
    /// renamed away changes the folder three times and takes its lock twice. That lock,
    /// taken by the other transfers' creates in the same folder, was 14% of a pull's
    /// samples (spinning), and the creates and renames 56%. Gone, unnamed, if the run is
    /// killed: nothing to clean up.
    package var unnamed: OpenFile?
}

/// What a download knows before its first trip to a blocking thread, where its partial
/// file is made (`makePartial`).
struct DownloadStart: Sendable {
    package let planned: FileRecord
    package let remote: RemoteVersion
    package let source: RelativePath
    /// The local path, relative to the folder, and its partial file and ledger beside it.
    package let relative: String
    package let partial: String
    package let ledger: String
    /// Where the file goes, for messages.
    package let final: String
    /// Continue an earlier partial download only if it was made from this remote version.
    package let resumable: Bool
    package let reserve: FreeSpaceReserve

    package var expected: RemoteEntry {
        RemoteEntry(path: source, kind: .file, size: remote.size, modifiedNanos: remote.modifiedNanos, etag: remote.etag)
    }

    /// A large file is marked (resumable) and flushed by the backend and put in place on its
    /// own; a small one is fetched again after a crash, and flushed and placed with its batch.
    var placedAlone: Bool { remote.size >= TransferExecutor.resumableSize }

    /// Makes the partial file (or finds the one an earlier attempt left, when it may be
    /// continued) through the anchor, never through a link; the backend only opens it.
    /// Runs on a blocking thread; `folders` opens the file's folder. With `unnamed`, a
    /// small file for a name that had no file when planned is made with no name where the
    /// filesystem can (`PartialDownload.unnamed`); only a backend that writes an open file
    /// (`DirectDownloadBackend`) can fill one.
    func makePartial(in folders: inout PartialFolders, unnamed: Bool = false) throws(BackendError) -> PartialDownload {
        let remote = self.remote
        let final = self.final
        return try BackendError.catching { () throws -> PartialDownload in
            // The file's folder, made if missing and opened once for the names in it.
            let folder = try folders.open(LocalFolder.parent(relative))
            let partial = LocalFolder.name(of: partial)
            let ledger = LocalFolder.name(of: ledger)
            if resumable, let partialMeta = try folder.metadata(partial), partialMeta.kind == .file,
               partialMeta.size <= remote.size {
                let file = try folder.open(partial, .writeExisting)
                // Written out of order by several streams: only the ledger's prefix
                // is known good, whatever the size says (holes past it).
                if try folder.metadata(ledger) != nil {
                    let good = (try? folder.open(ledger, .read).readAll()).flatMap(PartialFileLedger.decode) ?? 0
                    try file.truncate(to: min(good, partialMeta.size))
                    try file.sync()
                    try folder.removeFile(ledger)
                }
                let meta = try file.metadata()
                return PartialDownload(offset: meta.size, file: meta)
            }
            let created: FileMetadata
            var unnamedFile: OpenFile?
            // A small file never has a ledger (only ranged streams write one), and its
            // partial file is there only after a crash: created directly, without two
            // unlinks that lock the folder against the other transfers in it.
            if unnamed, remote.size < TransferExecutor.resumableSize, planned.local == nil,
               let fresh = folder.createUnnamedIfSuited(for: LocalFolder.name(of: relative)) {
                unnamedFile = fresh
                created = try fresh.metadata()
            } else if remote.size < TransferExecutor.resumableSize, let fresh = try? folder.open(partial, .createNew) {
                created = try fresh.metadata()
            } else {
                try folder.removeFile(ledger)
                try folder.removeFile(partial)
                created = try folder.open(partial, .createNew).metadata()
            }
            if let refusal = try folders.reserve(remote.size, on: created.device, in: folder, keeping: reserve) {
                try folder.removeFile(partial)
                throw BackendError(.noSpace, refusal, path: final)
            }
            return PartialDownload(offset: 0, file: created, unnamed: unnamedFile)
        }
    }

    /// The request that fills the partial file; nil when it is complete already (killed
    /// between the last byte and the rename), where a range starting at the end would be
    /// unsatisfiable (HTTP 416).
    package func request(into partial: PartialDownload, root: AnchoredFolder) -> DownloadRequest? {
        guard !(partial.offset > 0 && partial.offset == remote.size) else { return nil }
        return DownloadRequest(source: source, partialFile: root.fullPath(self.partial), offset: partial.offset,
                               expected: expected, flush: placedAlone, openPartial: partial.unnamed)
    }
}

/// The folders one trip's partial files are made in (made if missing), and the free space
/// of each filesystem written to, read once and counted down by each file admitted. Kept
/// for one trip only.
struct PartialFolders {
    private var folders: FolderWalkCache
    private var space: [UInt64: (available: Int64, total: Int64)] = [:]

    package init(root: AnchoredFolder) {
        folders = FolderWalkCache(root: root, creating: 0o755)
    }

    mutating func open(_ path: String) throws(SystemError) -> AnchoredFolder {
        try folders.folder(path)
    }

    /// Why `bytes` more must not be written to the filesystem `device` (which `folder` is
    /// on), or nil when they fit with the reserve left over, and are then counted as used.
    package mutating func reserve(_ bytes: Int64, on device: UInt64, in folder: AnchoredFolder,
                          keeping reserve: FreeSpaceReserve) throws(SystemError) -> String? {
        let current: (available: Int64, total: Int64)
        if let known = space[device] {
            current = known
        } else {
            current = try folder.filesystemSpace()
        }
        if let refusal = reserve.refusal(needed: bytes, available: current.available, totalBytes: current.total) {
            space[device] = current
            return refusal
        }
        space[device] = (current.available - bytes, current.total)
        return nil
    }
}

/// The `download` job: the remote file comes into a partial file beside its local name
/// (made through the anchor, continued when it holds the same remote version), is checked,
/// and is renamed into place; a large file is flushed by the backend and placed at once, a
/// small one is placed with its batch.
extension TransferExecutor {
    func download(_ planned: FileRecord, observer: JobObserver) async throws -> Success {
        guard let start = try downloadStart(for: planned) else { return .vanished }
        let root = local.root
        let partial = try await BlockingIO.run { () throws(BackendError) -> PartialDownload in
            var folders = PartialFolders(root: root)
            return try start.makePartial(in: &folders)
        }
        var record = planned
        record.beginDownload(of: start.remote, at: currentTime())
        if start.placedAlone { try await writer.markNow(record) }
        var outcome: Result<DownloadResult, BackendError>?
        if let request = start.request(into: partial, root: root) {
            outcome = await downloadOutcome(request, observer: observer)
        }
        return try await finishDownload(start, record: record, partial: partial, outcome: outcome)
    }

    /// What a download of the planned row needs before its first trip; nil when the row
    /// names no remote file (nothing to fetch).
    func downloadStart(for planned: FileRecord) throws -> DownloadStart? {
        guard let remote = planned.remote else { return nil }
        let relative = planned.path
        let partial = LocalFolder.temporary(beside: relative)
        return DownloadStart(planned: planned, remote: remote, source: try remotePath(planned), relative: relative,
                             partial: partial, ledger: PartialFileLedger.path(forPartial: partial), final: localPath(planned),
                             resumable: planned.transferRemote.map { $0 == remote } ?? false, reserve: freeSpaceReserve)
    }

    /// Whether a job may go with others in one trip to a blocking thread
    /// (`downloadTogether`): a small file's download from a backend that fetches on the
    /// calling thread (a local disk), where each file's hand-offs between threads cost more
    /// than its copy.
    func downloadsTogether(_ record: FileRecord) -> Bool {
        record.action == .download && (record.remote?.size ?? Self.resumableSize) < Self.resumableSize
            && fetchesDirectly
    }

    /// Downloads small files in one trip to a blocking thread: each partial file is made as
    /// `download` makes it, then the backend fills them one after the other; each has its
    /// own outcome, and waits to be placed with its batch.
    func downloadTogether(_ jobs: [(record: FileRecord, observer: JobObserver)]) async -> [Result<Success, Failure>] {
        guard let fetcher = pair.backend as? any DirectDownloadBackend else {
            var outcomes: [Result<Success, Failure>] = []
            for job in jobs { outcomes.append(await attempt(job.record, observer: job.observer)) }
            return outcomes
        }
        let starts = jobs.map { job in Result { try downloadStart(for: job.record) } }
        let root = local.root
        let trips = await BlockingIO.run { () -> [Result<(PartialDownload, Result<DownloadResult, BackendError>?)?, any Error>] in
            var folders = PartialFolders(root: root)
            var partials: [Result<PartialDownload?, any Error>] = []
            var fetching: [(index: Int, request: DownloadRequest, observer: any TransferObserver)] = []
            for (index, start) in starts.enumerated() {
                partials.append(Result {
                    guard let start = try start.get() else { return nil }
                    let partial = try start.makePartial(in: &folders, unnamed: true)
                    if let request = start.request(into: partial, root: root) {
                        fetching.append((index, request, jobs[index].observer))
                    }
                    return partial
                })
            }
            var fetched = [Result<DownloadResult, BackendError>?](repeating: nil, count: jobs.count)
            for (entry, result) in zip(fetching, fetcher.downloadNow(fetching.map { ($0.request, $0.observer) })) {
                fetched[entry.index] = result
            }
            return zip(partials, fetched).map { partial, outcome in partial.map { $0.map { ($0, outcome) } } }
        }
        var outcomes: [Result<Success, Failure>] = []
        outcomes.reserveCapacity(jobs.count)
        for (job, (start, trip)) in zip(jobs, zip(starts, trips)) {
            outcomes.append(await Self.outcome(of: job.record) { () async throws -> Success in
                try await decidingAgainOnChange(job.record) { () async throws -> Success in
                    guard let start = try start.get(), let (partial, outcome) = try trip.get() else { return .vanished }
                    var record = job.record
                    record.beginDownload(of: start.remote, at: currentTime())
                    return try await finishDownload(start, record: record, partial: partial, outcome: outcome)
                }
            })
        }
        return outcomes
    }

    /// The rest of a download after its request: what came is checked with its batch (a
    /// small file) or put in place now (a large one). `outcome` nil: the partial file was
    /// complete already. `record` is the job's row, marked as downloading.
    private func finishDownload(_ start: DownloadStart, record: FileRecord, partial: PartialDownload,
                                outcome: Result<DownloadResult, BackendError>?) async throws -> Success {
        let folder = local.root
        let result: DownloadResult
        switch outcome ?? .success(DownloadResult(entry: start.expected, bytesReceived: 0, resumedFrom: partial.offset)) {
        case let .success(value):
            result = value
        case let .failure(error):
            // A remote file deleted since the listing is not an error: there is nothing to
            // fetch. "Not found" may be the local partial file (a folder on its path swapped
            // away meanwhile) as well as the remote file: only a remote file that is gone vanished.
            guard error.code == .notFound else {
                // A download that failed for good (a tampered encrypted file, a refusal)
                // leaves nothing behind; one that may be retried keeps its partial file to
                // continue from.
                if !error.isRetryable {
                    try? folder.removeFile(start.partial)
                    try? folder.removeFile(start.ledger)
                }
                throw error
            }
            if try await pair.backend.stat(start.source) != nil {
                throw BackendError(.io, "the download could not write its partial file (\(error.description))",
                                   path: start.final, retryable: true)
            }
            try? folder.removeFile(start.partial)
            try? folder.removeFile(start.ledger)
            return .vanished
        }

        // More bytes than listed: another device wrote the file since the listing. Found
        // here, in the job, it is decided again at once (`decidingAgainOnChange`); found
        // when its batch is placed, the file would wait for the next run.
        if result.entry.size > start.remote.size {
            try? folder.removeFile(start.partial)
            try? folder.removeFile(start.ledger)
            throw BackendError(.changedDuringTransfer, "\(result.entry.size) bytes arrived for a file listed as \(start.remote.size)",
                               path: start.final, retryable: true)
        }
        let planned = start.planned
        let fetched = FetchedDownload(
            record: record, relative: start.relative, partial: start.partial, partialFile: partial.file, unnamed: partial.unnamed,
            expectedLocal: planned.local, trashTarget: planned.local != nil ? planned.moveTarget : nil,
            result: result, remote: start.remote)
        // A small file is checked with its batch, on the same trip to a blocking thread.
        guard start.placedAlone else { return .fetched(fetched) }
        let relative = start.relative
        let placed = try await BlockingIO.run { () throws(BackendError) -> FileRecord in
            let parent = try BackendError.catching { try folder.folder(LocalFolder.parent(relative)) }
            try checkFetched(fetched, in: parent)
            return try place(fetched, in: parent)
        }
        return .transferred(placed, bytes: result.bytesReceived, resumedFrom: result.resumedFrom)
    }

    private func downloadOutcome(_ request: DownloadRequest, observer: JobObserver) async -> Result<DownloadResult, BackendError> {
        do {
            return .success(try await pair.backend.download(request, observer: observer))
        } catch {
            return .failure(error)
        }
    }

    /// Checks that the partial file is the one made for the download and holds what came,
    /// and gives it the remote file's time. `folder` is the file's folder, opened once for
    /// the checks and the rename (`AnchoredFolder.folder`).
    private func checkFetched(_ fetched: FetchedDownload, in folder: AnchoredFolder) throws(BackendError) {
        let partial = LocalFolder.name(of: fetched.partial)
        let listedSize = fetched.remote.size
        let final = folder.fullPath(LocalFolder.name(of: fetched.relative))
        try BackendError.catching { () throws in
            // A file with no name cannot have been replaced: it is looked at through its descriptor.
            let written: FileMetadata
            if let unnamed = fetched.unnamed {
                written = try unnamed.metadata()
            } else {
                guard let named = try folder.metadata(partial), named.kind == .file,
                      named.inode == fetched.partialFile.inode, named.device == fetched.partialFile.device else {
                    throw BackendError(.io, "the partial file was replaced while it was being written", path: folder.fullPath(partial))
                }
                written = named
            }
            // Whatever the backend (an exec plugin writes the partial file itself): never
            // more than the listed size under the final name.
            guard written.size <= listedSize else {
                try? folder.removeFile(partial)
                throw BackendError(.changedDuringTransfer,
                                   "\(written.size) bytes arrived for a file listed as \(listedSize); not put in place",
                                   path: final, retryable: true)
            }
            guard written.size == fetched.result.entry.size else {
                throw BackendError(.io, "the downloaded file has the wrong size", path: folder.fullPath(partial), retryable: true)
            }
            // A store that keeps no times gives the upload's; the remote catalog kept the file's.
            let kept = keptTimes[fetched.record.remoteSpelling ?? fetched.record.path]?.time(for: fetched.result.entry)
            if let modified = kept ?? fetched.result.entry.modifiedNanos {
                if let unnamed = fetched.unnamed {
                    try unnamed.setModificationTime(nanos: modified)
                } else {
                    try folder.setModificationTime(partial, nanos: modified)
                }
            }
        }
    }

    /// Renames a fetched (and flushed) download into place in its folder (`folder`), unless
    /// the local file changed since planning; returns its row, in sync.
    private func place(_ fetched: FetchedDownload, in folder: AnchoredFolder) throws(BackendError) -> FileRecord {
        let local = self.local
        let relative = LocalFolder.name(of: fetched.relative)
        let partial = LocalFolder.name(of: fetched.partial)
        let final = folder.fullPath(relative)
        // The file just renamed into place, as the journal records it.
        func inPlace() throws -> FileMetadata {
            guard let placed = try folder.metadata(relative) else {
                throw BackendError(.io, "the file vanished right after it was put in place", path: final, retryable: true)
            }
            return placed
        }
        let landed = try BackendError.catching { () throws -> FileMetadata in
            // A new file (nothing under its name when planned): the rename itself refuses a
            // name taken since, in one step, where a look and then a rename left a moment
            // in which a file made there would be replaced; it also saves the look (one
            // lookup per file). A name that is taken goes the checked way below.
            if let unnamed = fetched.unnamed {
                // Named in one step that refuses a taken name, as the rename below; a name
                // taken since planning is looked at the checked way, under the partial name.
                do {
                    try folder.link(unnamed, as: relative)
                    // The file just named, through its descriptor (its change time is the link's).
                    return try unnamed.metadata()
                } catch let error as SystemError where error.isAlreadyExists {
                    try folder.removeFile(partial)
                    try folder.link(unnamed, as: partial)
                }
            } else if fetched.expectedLocal == nil {
                let renamed: Bool
                do {
                    try folder.rename(partial, to: relative, replacing: false)
                    renamed = true
                } catch let error as SystemError where error.isAlreadyExists || error.isUnsupportedByFilesystem {
                    renamed = false
                }
                if renamed { return try inPlace() }
            }
            let current = try folder.metadata(relative)
            let unchanged: Bool
            switch (current, fetched.expectedLocal) {
            case (nil, nil): unchanged = true
            case let (current?, expected?): unchanged = current.size == expected.size && current.modifiedNanos == expected.modifiedNanos
            case let (nil, expected?):
                // An earlier attempt moved the old version into the trash and stopped
                // before putting the new one in place.
                let trashed = try fetched.trashTarget.flatMap { target throws(BackendError) in try local.trashed(target) }
                unchanged = trashed.map { $0.size == expected.size && $0.modifiedNanos == expected.modifiedNanos } ?? false
            default: unchanged = false
            }
            guard unchanged else {
                // An earlier attempt of this very download put it in place and was
                // stopped before the journal heard of it (a kill -9): the file there
                // has the size and time this attempt gives, and the same bytes. S3
                // shows this: its listing's time is the upload's, not the one a pull
                // sets, so planning could not recognise the file as Ferry's own.
                if let current, current.kind == .file, current.size == fetched.result.entry.size,
                   let modified = fetched.result.entry.modifiedNanos, current.modifiedNanos == modified,
                   try Self.sameBytes(try folder.open(relative, .read), try folder.open(partial, .read)) {
                    try folder.removeFile(partial)
                    return current
                }
                throw BackendError(.changedDuringTransfer,
                                   "the local file changed while the remote version was downloading; run pull again",
                                   path: final, retryable: false)
            }
            if current?.kind == .directory {
                throw BackendError(.alreadyExists, "a local folder is in the way of the file", path: final)
            }
            if let trashTarget = fetched.trashTarget, current != nil {
                try local.moveToTrash(fetched.relative, target: trashTarget)
            }
            try folder.rename(partial, to: relative)
            return try inPlace()
        }
        var record = fetched.record
        let result = fetched.result
        let localVersion = LocalVersion(size: landed.size, modifiedNanos: landed.modifiedNanos, inode: Int64(bitPattern: landed.inode))
        let remoteVersion = RemoteVersion(size: result.entry.size, modifiedNanos: result.entry.modifiedNanos,
                                          etag: result.entry.etag ?? fetched.remote.etag)
        record.markInSync(local: localVersion, remote: remoteVersion, at: currentTime(),
                          localChangedNanos: landed.changedNanos)
        return record
    }

    /// Checks a batch of fetched downloads and puts them in place, one result per download
    /// in the batch's order, in one trip to a blocking thread: the filesystems they were
    /// written to are flushed once (`syncfs`) before any rename, and once more after the
    /// renames, before the engine records them. A file is never under its name before its
    /// bytes are on disk, and no row says in sync before its rename is. A download that
    /// cannot be placed has its partial file removed (a small file is simply fetched again).
    func placeFetched(_ batch: [FetchedDownload]) async -> [Result<FileRecord, BackendError>] {
        let folder = local.root
        return await BlockingIO.run { () -> [Result<FileRecord, BackendError>] in
            var results = [Result<FileRecord, BackendError>?](repeating: nil, count: batch.count)
            // Checked (and given their times) before the flush, so that the times are on
            // disk too before any rename.
            // A batch comes folder by folder: each folder is opened once for its files.
            var folders = FolderWalkCache(root: folder)
            func parent(of item: FetchedDownload) throws(BackendError) -> AnchoredFolder {
                try BackendError.catching { try folders.folder(LocalFolder.parent(item.relative)) }
            }
            for (index, item) in batch.enumerated() {
                do throws(BackendError) { try checkFetched(item, in: try parent(of: item)) } catch { results[index] = .failure(error) }
            }
            // One open file per filesystem written to (a folder inside may be a mount point),
            // to flush that filesystem through.
            var flushers: [UInt64: OpenFile] = [:]
            for (index, item) in batch.enumerated() where results[index] == nil && flushers[item.partialFile.device] == nil {
                do throws(SystemError) {
                    if let unnamed = item.unnamed {
                        flushers[item.partialFile.device] = unnamed
                    } else {
                        flushers[item.partialFile.device] = try folder.open(item.partial, .read)
                    }
                } catch {
                    results[index] = .failure(BackendError(error))
                }
            }
            var flushFailures: [UInt64: BackendError] = [:]
            for (device, file) in flushers {
                do throws(SystemError) { try file.syncFilesystem() } catch { flushFailures[device] = BackendError(error) }
            }
            for (index, item) in batch.enumerated() where results[index] == nil {
                // Its filesystem has a flusher: its own partial file, or an earlier one's.
                if let failure = flushFailures[item.partialFile.device] {
                    results[index] = .failure(failure)
                } else {
                    do throws(BackendError) {
                        results[index] = .success(try place(item, in: try parent(of: item)))
                    } catch {
                        results[index] = .failure(error)
                    }
                }
            }
            for (device, file) in flushers where flushFailures[device] == nil {
                do throws(SystemError) { try file.syncFilesystem() } catch { flushFailures[device] = BackendError(error) }
            }
            return zip(batch, results).map { item, result -> Result<FileRecord, BackendError> in
                var outcome = result ?? .failure(BackendError(.io, "not placed", path: folder.fullPath(item.relative)))
                if case .success = outcome, let failure = flushFailures[item.partialFile.device] {
                    outcome = .failure(failure)
                }
                if case .failure = outcome { try? folder.removeFile(item.partial) }
                return outcome
            }
        }
    }
}
