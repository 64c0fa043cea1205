import FerryPluginAPI
import FerrySystem
import Foundation

/// A download written in full into its partial file, waiting to be checked (identity,
/// size, time), flushed with others and put in place under its name. A small file is not
/// flushed on its own: an `fsync` per file was most of a pull of small files, and the
/// engine flushes a batch at once (`TransferExecutor.placeFetched`) before any rename.
struct FetchedDownload: Sendable {
    /// The job's row, marked as downloading; `inSync` once the file is in place.
    var record: FileRecord
    var relative: String
    var partial: String
    /// The partial file as created: it must still be the same file when put in place.
    var partialFile: FileMetadata
    /// The local version the download replaces (nil: none), as planned.
    var expectedLocal: LocalVersion?
    /// Two-way sync: where that local version goes in the local trash.
    var trashTarget: String?
    var result: DownloadResult
    /// The remote version as listed, for what the download's answer left out (its ETag).
    var remote: RemoteVersion
}

/// The `download` job: the remote file comes into a partial file beside its local name
/// (made through the anchor, continued when it holds the same remote version), is checked,
/// and is renamed into place; a large file is flushed by the backend and placed at once, a
/// small one is placed with its batch.
extension TransferExecutor {
    func download(_ planned: FileRecord, observer: JobObserver) async throws -> Success {
        guard let remote = planned.remote else {
            return .vanished
        }
        let source = try remotePath(planned)
        let relative = planned.path
        let final = localPath(planned)
        let partial = LocalFolder.temporary(beside: relative)
        let ledger = PartialFileLedger.path(forPartial: partial)
        let folder = local.root
        let root = folder

        // Continue an earlier partial download only if it was made from this remote version.
        let resumable = planned.transferRemote.map { $0 == remote } ?? false
        let reserve = freeSpaceReserve
        // The partial file is made here, through the anchor (never through a link), and
        // the backend only opens it; its identity is checked before it is put in place.
        let (offset, partialFile): (Int64, FileMetadata) = try await BlockingIO.run { () throws(BackendError) -> (Int64, FileMetadata) in
            try BackendError.catching { () throws -> (Int64, FileMetadata) in
                // The file's folder, made if missing and opened once for the names in it.
                let folder = try root.folder(LocalFolder.parent(relative), creating: 0o755)
                let partial = Self.name(of: partial)
                let ledger = Self.name(of: ledger)
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
                    return (meta.size, meta)
                }
                let created: FileMetadata
                // A small file never has a ledger (only ranged streams write one), and its
                // partial file is there only after a crash: created directly, without two
                // unlinks that lock the folder against the other transfers in it.
                if remote.size < Self.resumableSize, let fresh = try? folder.open(partial, .createNew) {
                    created = try fresh.metadata()
                } else {
                    try folder.removeFile(ledger)
                    try folder.removeFile(partial)
                    created = try folder.open(partial, .createNew).metadata()
                }
                let space = try folder.filesystemSpace()
                if let refusal = reserve.refusal(needed: remote.size, available: space.available, totalBytes: space.total) {
                    try folder.removeFile(partial)
                    throw BackendError(.noSpace, refusal, path: final)
                }
                return (0, created)
            }
        }

        var record = planned
        record.beginDownload(of: remote, at: currentTime())
        // A large file is marked (resumable) and flushed by the backend; a small one is
        // fetched again after a crash, and flushed with its batch.
        let placedAlone = remote.size >= Self.resumableSize
        if placedAlone { try await writer.markNow(record) }

        let expected = RemoteEntry(path: source, kind: .file, size: remote.size, modifiedNanos: remote.modifiedNanos, etag: remote.etag)
        // A partial file that is already complete (killed between the last byte and the
        // rename) needs no request: a range starting at the end is unsatisfiable (HTTP 416).
        // A remote file deleted since the listing is not an error: there is nothing to fetch.
        let outcome = offset > 0 && offset == remote.size
            ? .success(DownloadResult(entry: expected, bytesReceived: 0, resumedFrom: offset))
            : await downloadOutcome(
                DownloadRequest(source: source, partialFile: folder.fullPath(partial), offset: offset, expected: expected,
                                flush: placedAlone),
                observer: observer)
        let result: DownloadResult
        switch outcome {
        case let .success(value):
            result = value
        case let .failure(error):
            guard error.code == .notFound else { throw error }
            // "Not found" may be the local partial file (a folder on its path swapped away
            // meanwhile) as well as the remote file: only a remote file that is gone vanished.
            if try await pair.backend.stat(source) != nil {
                throw BackendError(.io, "the download could not write its partial file (\(error.description))",
                                   path: final, retryable: true)
            }
            try? folder.removeFile(partial)
            try? folder.removeFile(ledger)
            return .vanished
        }

        let fetched = FetchedDownload(
            record: record, relative: relative, partial: partial, partialFile: partialFile, expectedLocal: planned.local,
            trashTarget: planned.local != nil ? planned.moveTarget : nil, result: result, remote: remote)
        // A small file is checked with its batch, on the same trip to a blocking thread.
        guard placedAlone else { return .fetched(fetched) }
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
        let partial = Self.name(of: fetched.partial)
        let listedSize = fetched.remote.size
        let final = folder.fullPath(Self.name(of: fetched.relative))
        try BackendError.catching { () throws in
            guard let written = try folder.metadata(partial), written.kind == .file,
                  written.inode == fetched.partialFile.inode, written.device == fetched.partialFile.device else {
                throw BackendError(.io, "the partial file was replaced while it was being written", path: folder.fullPath(partial))
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
            if let modified = fetched.result.entry.modifiedNanos {
                try folder.setModificationTime(partial, nanos: modified)
            }
        }
    }

    /// Renames a fetched (and flushed) download into place in its folder (`folder`), unless
    /// the local file changed since planning; returns its row, in sync.
    private func place(_ fetched: FetchedDownload, in folder: AnchoredFolder) throws(BackendError) -> FileRecord {
        let local = self.local
        let relative = Self.name(of: fetched.relative)
        let partial = Self.name(of: fetched.partial)
        let final = folder.fullPath(relative)
        let landed = try BackendError.catching { () throws -> FileMetadata in
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
            guard let placed = try folder.metadata(relative) else {
                throw BackendError(.io, "the file vanished right after it was put in place", path: final, retryable: true)
            }
            return placed
        }
        var record = fetched.record
        let result = fetched.result
        let localVersion = LocalVersion(size: landed.size, modifiedNanos: landed.modifiedNanos, inode: Int64(bitPattern: landed.inode))
        let remoteVersion = RemoteVersion(size: result.entry.size, modifiedNanos: result.entry.modifiedNanos,
                                          etag: result.entry.etag ?? fetched.remote.etag)
        record.markInSync(local: localVersion, remote: remoteVersion, at: currentTime())
        return record
    }

    /// The last name of a path relative to the local root.
    private static func name(of relative: String) -> String {
        relative.lastIndex(of: "/").map { String(relative[relative.index(after: $0)...]) } ?? relative
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
            var opened: (path: String, folder: AnchoredFolder)?
            func parent(of item: FetchedDownload) throws(BackendError) -> AnchoredFolder {
                let path = LocalFolder.parent(item.relative)
                if let opened, opened.path == path { return opened.folder }
                let parent = try BackendError.catching { try folder.folder(path) }
                opened = (path, parent)
                return parent
            }
            for (index, item) in batch.enumerated() {
                do throws(BackendError) { try checkFetched(item, in: try parent(of: item)) } catch { results[index] = .failure(error) }
            }
            // One open file per filesystem written to (a folder inside may be a mount point),
            // to flush that filesystem through.
            var flushers: [UInt64: OpenFile] = [:]
            for (index, item) in batch.enumerated() where results[index] == nil && flushers[item.partialFile.device] == nil {
                do throws(SystemError) {
                    flushers[item.partialFile.device] = try folder.open(item.partial, .read)
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
