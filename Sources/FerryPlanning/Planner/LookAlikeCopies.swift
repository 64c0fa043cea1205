/// Two copies of a file that agree on size and modification time but that no sync
/// vouched for (never synced, or both changed since the last sync). Agreement on size and
/// time is not proof of equal content: two edits within one clock tick, or a tool that
/// keeps the time (`exiftool -P`), leave different bytes behind the same size and time.
/// Recording such copies as in sync would keep the sides different forever, unreported.
///
/// So the copies are compared (the `compareContent` job reads the remote copy and compares
/// the bytes): equal bytes are recorded as in sync; different ones are decided as if the
/// times had differed, and a conflict among them says so, so that later plans keep it a
/// conflict without reading both sides again.
extension Planner {
    /// How the reason of a conflict between look-alike copies with different bytes starts.
    public static let contentDiffersNote = "same size and time, different content"

    /// The decision for look-alike copies, or nil when the copies do not look alike.
    static func lookAlikeDecision(_ record: FileRecord, options: PlanOptions) -> Decision? {
        guard let local = record.local, let remote = record.remote else { return nil }
        guard remote.matches(local) else { return mayBeUnrecordedTransfer(record) ? .transfer(.compareContent) : nil }
        // Ferry's own transfer of exactly these versions stopped before it was recorded:
        // the bytes on the other side are the ones it sent.
        if record.status == .uploading && record.transferLocal == local { return .adopt }
        if record.status == .downloading && record.transferRemote == remote { return .adopt }
        // Already compared and found different; the conflict waits for a person.
        if record.status == .conflict && record.lastError?.hasPrefix(contentDiffersNote) == true {
            return decideDiffering(record, options: options, reason: nil)
        }
        return .transfer(.compareContent)
    }

    /// A transfer of the file was planned when a run was cut short (a crash, `kill -9`), and
    /// both sides now hold versions of one size that the journal never saw together. That
    /// is likely the transfer's own copy, sent and not recorded: an upload's on a server
    /// that lists its own time (Apache, S3) rather than the file's, a download's placed
    /// before its time was set or where the listing's time is not the one kept. Not looking
    /// alike, both copies would be kept as a conflict. The bytes are compared first.
    static func mayBeUnrecordedTransfer(_ record: FileRecord) -> Bool {
        (record.status.isPending || record.status == .syncError) && destinationMayHoldOwnCopy(record)
    }

    /// Whether the side a transfer writes holds a copy of the source's size that is not the
    /// version last synced there: perhaps that transfer's own result, never recorded.
    private static func destinationMayHoldOwnCopy(_ record: FileRecord) -> Bool {
        guard record.action == .upload || record.action == .download,
              let local = record.local, let remote = record.remote, remote.size == local.size else { return false }
        if record.action == .upload { return !(record.syncedRemote?.isSameVersion(as: remote) ?? false) }
        return !(record.syncedLocal.map { Planner.sameLocal($0, local) } ?? false)
    }

    /// Whether a file created on both sides since no sync, with one size on both and not
    /// yet found different, is to be compared before it is kept both ways: the two copies
    /// are often one file (a rename's MOVE done and not recorded before a crash, a folder
    /// filled with the same photos by another tool before the first sync, on a server that
    /// lists its own times), and a conflict copy of identical bytes is noise a person has
    /// to clear. Comparing costs the download that keeping both costs anyway.
    /// A conflict already recorded waits for a person, whatever its reason.
    static func mayBeOneNewFile(_ record: FileRecord, contentDiffers: Bool) -> Bool {
        guard !contentDiffers, record.resolution == nil, record.status != .conflict, let local = record.local,
              let remote = record.remote else { return false }
        return local.size == remote.size
    }

    /// The decision for a file met again in the middle of its job (the remote changed since
    /// the listing, or an upload found its name taken): made as for a file with no job, so
    /// that the other side's copy is not taken for an unrecorded result of an earlier run.
    /// Except that an upload tried again after an attempt whose answer was lost (the
    /// connection dropped after the server stored the file) meets that attempt's own copy:
    /// one of the local file's size is compared first, not kept both ways.
    package static func decideAgain(_ record: FileRecord, options: PlanOptions) -> Decision {
        if record.action == .upload, destinationMayHoldOwnCopy(record) { return .transfer(.compareContent) }
        var deciding = record
        deciding.action = nil
        return decide(deciding, options: options)
    }

    /// The decision for look-alike copies whose bytes differ (or could not be compared:
    /// `reason` says why), as if their times had differed.
    package static func decideDiffering(_ record: FileRecord, options: PlanOptions, reason: String?) -> Decision {
        let decision = decide(record, options: options, contentDiffers: true)
        guard case let .conflict(conflictReason) = decision else { return decision }
        if conflictReason.hasPrefix(contentDiffersNote) { return decision }
        return .conflict(contentDiffersNote + (reason.map { " (\($0))" } ?? "") + "; " + conflictReason)
    }
}
