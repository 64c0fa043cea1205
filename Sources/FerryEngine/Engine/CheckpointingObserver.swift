import FerryPlanning
import FerryPluginAPI

/// A large upload's observer: the job's own, plus a journal write of each checkpoint the
/// backend reports. After a crash the next run hands the last one back, so the backend
/// continues the upload the journal names, not whichever unfinished upload of the same
/// path the store happens to list (another machine's, or an orphan).
struct CheckpointingObserver: TransferObserver {
    package let job: JobObserver
    /// The upload's `uploading` row, as marked before its first byte.
    package let marked: FileRecord
    package let writer: RunJournalWriter

    package func bytesTransferred(_ count: Int) -> Duration { job.bytesTransferred(count) }

    package var isCancelled: Bool { job.isCancelled }

    package func uploadCheckpoint(_ state: String) async {
        var row = marked
        row.transferState = state
        // A write that fails costs only the shortcut: without a checkpoint the backend
        // looks for the upload on the store. The journal's failure itself surfaces when the
        // job's result is committed.
        try? await writer.markNow(row)
    }
}
