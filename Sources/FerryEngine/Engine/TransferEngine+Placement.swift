import FerryPlanning
import FerryPluginAPI

/// Small transfers waiting to be put in place together: uploads written under their
/// temporary names (`StagedUploadBackend`) and downloads in their partial files
/// (`FetchedDownload`). A batch is flushed once and renamed into place on a task of its
/// own, beside the jobs, and booked only once in place.
struct PlacementBatch: Sendable {
    typealias Upload = (record: FileRecord, updated: FileRecord, upload: StagedUpload)
    typealias Download = (record: FileRecord, download: FetchedDownload)

    package var uploads: [Upload] = []
    package var downloads: [Download] = []

    package var isEmpty: Bool { uploads.isEmpty && downloads.isEmpty }

    /// What each file of a batch came to once put in place, or why it is not.
    package struct Outcome: Sendable {
        package var uploads: [(entry: Upload, result: Result<UploadResult, BackendError>)] = []
        package var downloads: [(entry: Download, result: Result<FileRecord, BackendError>)] = []
    }

    /// Uploads under their names whose names are not flushed yet (`publishStaged(_:after:)`):
    /// booked only once a later flush has covered them.
    struct Unflushed: Sendable {
        package var uploads: [(entry: Upload, result: Result<UploadResult, BackendError>)]
        package var names: UnflushedNames
    }

    /// What a placement leaves: files to book now, and the uploads it named whose names
    /// wait for the next flush.
    struct Placed: Sendable {
        package var outcome = Outcome()
        package var unflushed: Unflushed?
    }
}

extension TransferEngine {
    /// Flushes the batch's files and renames them into place; no journal work, so it runs
    /// beside the jobs. A flush of a local disk waits for its writeback: on ext4 that was
    /// 400 waits of up to 18 ms in a first push of 100,000 files, each holding every job's
    /// start back while the engine waited in line.
    ///
    /// The flush of the batch's bytes also flushes `earlier`'s names, so `earlier` is booked
    /// now, and this batch's uploads wait, named, for the next placement's flush: one flush
    /// per batch instead of two. A batch with no uploads just flushes `earlier`'s names.
    func place(_ batch: PlacementBatch, after earlier: PlacementBatch.Unflushed?) async -> PlacementBatch.Placed {
        var placed = PlacementBatch.Placed()
        if let stager = executor.pair.backend as? any StagedUploadBackend, !batch.uploads.isEmpty || earlier != nil {
            do throws(BackendError) {
                if batch.uploads.isEmpty, let earlier {
                    try await stager.flushNames(earlier.names)
                } else {
                    let (results, names) = try await stager.publishStaged(batch.uploads.map(\.upload), after: earlier?.names)
                    placed.unflushed = PlacementBatch.Unflushed(uploads: Array(zip(batch.uploads, results)), names: names)
                }
                placed.outcome.uploads = earlier?.uploads ?? []
            } catch {
                // Nothing of the batch is named, and `earlier`'s names may not be on disk.
                placed.outcome.uploads = (earlier?.uploads.map(\.entry) ?? []).map { ($0, .failure(error)) }
                    + batch.uploads.map { ($0, .failure(error)) }
            }
        }
        if !batch.downloads.isEmpty {
            placed.outcome.downloads = Array(zip(batch.downloads, await executor.placeFetched(batch.downloads.map(\.download))))
        }
        return placed
    }

    /// Places `batch` after `earlier`, then flushes the names it leaves: everything is
    /// durable, to be booked (the end of a run).
    func placeAll(_ batch: PlacementBatch, after earlier: PlacementBatch.Unflushed?) async -> PlacementBatch.Outcome {
        let placed = await place(batch, after: earlier)
        guard let unflushed = placed.unflushed else { return placed.outcome }
        var outcome = placed.outcome
        outcome.uploads += await place(PlacementBatch(), after: unflushed).outcome.uploads
        return outcome
    }

    /// The staged upload's record with the remote version publishing found: a backend may
    /// learn only then what the remote stored (a WebDAV server's ETag, the time it kept),
    /// and the next run must recognise that version as this one.
    static func publishedRecord(_ staged: FileRecord, _ published: UploadResult) -> FileRecord {
        var record = staged
        let remote = RemoteVersion(published.entry)
        if record.remote != remote {
            record.remote = remote
            record.syncedRemote = remote
        }
        return record
    }

    /// Books each file of a placed batch: in sync when in place; decided again when another
    /// writer took its new name first; else failed for good when sending again would fail
    /// again (a folder in the way of the file), or left queued. Returns the jobs that
    /// follow in this run.
    func book(_ outcome: PlacementBatch.Outcome, summary: inout RunSummary) async -> [FileRecord] {
        var followUps: [FileRecord] = []
        for (entry, result) in outcome.uploads {
            switch result {
            case let .success(published):
                _ = await bookSuccess(entry.record, .transferred(Self.publishedRecord(entry.updated, published), bytes: published.bytesSent,
                                                                 resumedFrom: published.resumedFrom),
                                      summary: &summary)
            case let .failure(error) where error.code == .alreadyExists:
                do {
                    if let decided = try await executor.decidedAgain(entry.record, refusedWith: error) {
                        followUps += await bookSuccess(entry.record, decided, summary: &summary)
                    } else {
                        await failForGood(entry.record, failures: entry.record.attempts + 1, message: error.description,
                                          summary: &summary)
                    }
                } catch {
                    // What took the name could not be looked at: the next run does.
                    await handBack(entry.record, message: "\(error); the next run sends it again", summary: &summary)
                }
            case let .failure(error) where !error.isRetryable:
                await failForGood(entry.record, failures: entry.record.attempts + 1, message: error.description,
                                  summary: &summary)
            case let .failure(error) where entry.record.attempts + 1 < retry.attempts:
                // Sent, but not known to be in place (a WebDAV server's answer to the look
                // at what it stored was lost): tried again in this run, as a failed attempt
                // is. The next attempt looks at the name first (`mayHaveLanded`) and sends
                // the file again only if it is not there as sent.
                followUps.append(await retryInThisRun(entry.record, after: error))
            case let .failure(error):
                // The file is written but not under its name: the next run sends it again.
                await handBack(entry.record, message: "\(error.description); the next run sends it again", summary: &summary)
            }
        }
        for (entry, result) in outcome.downloads {
            switch result {
            case let .success(placed):
                let received = entry.download.result
                _ = await bookSuccess(entry.record, .transferred(placed, bytes: received.bytesReceived,
                                                                 resumedFrom: received.resumedFrom),
                                      summary: &summary)
            case let .failure(error):
                // Not in place: it stays queued (a local file that changed meanwhile is
                // planned again by the next run, which says what it finds).
                let message = error.code == .changedDuringTransfer
                    ? error.description : "\(error.description); the next run fetches it again"
                await handBack(entry.record, message: message, summary: &summary)
            }
        }
        return followUps
    }

    /// Books a staged upload's failed publishing as a failed attempt, due at once, and
    /// returns the record that goes again in this run.
    private func retryInThisRun(_ record: FileRecord, after error: BackendError) async -> FileRecord {
        await bookFailedAttempt(record, failures: record.attempts + 1, error: error.description, notBefore: wallClock())
    }

    /// Books a failed attempt that is tried again from `notBefore`, and reports it; returns
    /// the record as booked.
    func bookFailedAttempt(_ record: FileRecord, failures: Int, error: String, notBefore: Double,
                           note: String? = nil) async -> FileRecord {
        var updated = await writer.current(record)
        updated.scheduleRetry(action: record.action ?? .upload, failures: failures, error: error,
                              notBefore: notBefore, at: wallClock())
        await writer.book(updated)
        sink.emit(.failed(path: record.path, queue: record.queue, message: note.map { "\(error); \($0)" } ?? error,
                          willRetry: true, attempt: failures))
        return updated
    }
}
