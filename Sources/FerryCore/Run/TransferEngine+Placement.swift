import FerryPluginAPI

/// Small transfers waiting to be put in place together: uploads written under their
/// temporary names (`StagedUploadBackend`) and downloads in their partial files
/// (`FetchedDownload`). A batch is flushed once and renamed into place on a task of its
/// own, beside the jobs, and booked only once in place.
struct PlacementBatch: Sendable {
    typealias Upload = (record: FileRecord, updated: FileRecord, upload: StagedUpload)
    typealias Download = (record: FileRecord, download: FetchedDownload)

    var uploads: [Upload] = []
    var downloads: [Download] = []

    var isEmpty: Bool { uploads.isEmpty && downloads.isEmpty }
    var count: Int { uploads.count + downloads.count }

    /// What each file of a batch came to once put in place, or why it is not.
    struct Outcome: Sendable {
        var uploads: [(entry: Upload, result: Result<UploadResult, BackendError>)] = []
        var downloads: [(entry: Download, result: Result<FileRecord, BackendError>)] = []
    }
}

extension TransferEngine {
    /// Flushes the batch's files and renames them into place; no journal work, so it runs
    /// beside the jobs. A flush of a local disk waits for its writeback: on ext4 that was
    /// 400 waits of up to 18 ms in a first push of 100,000 files, each holding every job's
    /// start back while the engine waited in line.
    func place(_ batch: PlacementBatch) async -> PlacementBatch.Outcome {
        var outcome = PlacementBatch.Outcome()
        if !batch.uploads.isEmpty, let stager = executor.pair.backend as? any StagedUploadBackend {
            let results: [Result<UploadResult, BackendError>]
            do throws(BackendError) {
                results = try await stager.publishStaged(batch.uploads.map(\.upload))
            } catch {
                results = Array(repeating: .failure(error), count: batch.uploads.count)
            }
            outcome.uploads = Array(zip(batch.uploads, results))
        }
        if !batch.downloads.isEmpty {
            outcome.downloads = Array(zip(batch.downloads, await executor.placeFetched(batch.downloads.map(\.download))))
        }
        return outcome
    }

    /// Books each file of a placed batch: in sync when in place; else failed for good when
    /// sending again would fail again (a folder in the way of the file), or left queued.
    func book(_ outcome: PlacementBatch.Outcome, summary: inout RunSummary) async {
        for (entry, result) in outcome.uploads {
            switch result {
            case let .success(published):
                _ = await bookSuccess(entry.record, .transferred(entry.updated, bytes: published.bytesSent,
                                                                 resumedFrom: published.resumedFrom),
                                      summary: &summary)
            case let .failure(error) where !error.isRetryable:
                await failForGood(entry.record, failures: entry.record.attempts + 1, message: error.description,
                                  summary: &summary)
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
    }
}
