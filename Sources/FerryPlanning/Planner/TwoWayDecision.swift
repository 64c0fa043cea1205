/// The two-way sync's rules, per file, from what changed on each side since the last sync:
///
/// | local \ remote | unchanged | changed | deleted |
/// |---|---|---|---|
/// | unchanged | nothing | download | delete local |
/// | changed | upload | conflict | upload |
/// | deleted | delete remote | download | forget |
///
/// and for files never synced: created on one side only → copied to the other; created on
/// both → conflict. Where both sides hold the same size and modification time but the
/// journal cannot vouch for them, the bytes are compared first (`LookAlikeCopies`). A
/// change beats a deletion: the changed file is copied back rather than lost. Conflicts go
/// to the file's policy (or a person's `ferry resolve` answer).
extension Planner {
    static func decideTwoWay(_ record: FileRecord, settings: SyncPlanSettings, contentDiffers: Bool = false) -> Decision {
        let local = SideChange.local(of: record)
        let remote = SideChange.remote(of: record)
        // A person's answer (or verify --hash finding the bytes differ) goes to settle.
        if record.resolution == nil, !(local == .unchanged && remote == .unchanged), !contentDiffers,
           let lookAlike = lookAlikeDecision(record, options: PlanOptions(mode: .sync, sync: settings)) {
            return lookAlike
        }
        switch (local, remote) {
        case (.unchanged, .unchanged): return .inSync
        case (.absent, .absent), (.deleted, .deleted), (.deleted, .absent), (.absent, .deleted): return .forget
        case (.changed, .unchanged), (.changed, .deleted), (.created, .absent), (.created, .deleted):
            return .transfer(.upload)
        case (.unchanged, .changed), (.deleted, .changed), (.absent, .created), (.deleted, .created):
            return .transfer(.download)
        case (.unchanged, .deleted): return .delete(.deleteLocal)
        case (.deleted, .unchanged): return .delete(.deleteRemote)
        case (.created, .created):
            return mayBeOneNewFile(record, contentDiffers: contentDiffers) ? .transfer(.compareContent) : settle(record, settings: settings)
        case (.changed, .changed), (.changed, .created), (.created, .changed):
            return settle(record, settings: settings)
        case (.unchanged, .created), (.created, .unchanged), (.absent, .unchanged), (.absent, .changed),
             (.unchanged, .absent), (.changed, .absent):
            // Unreachable: a side has a last-synced version exactly when the other has.
            return record.local != nil ? .transfer(.upload) : .transfer(.download)
        }
    }

    /// A file changed on both sides: the person's answer if there is one, else the policy.
    static func settle(_ record: FileRecord, settings: SyncPlanSettings) -> Decision {
        let policy = record.resolution ?? settings.conflicts.policy(forQueue: record.queue)
        switch policy {
        case .ask:
            return .conflict("changed on both sides since the last sync; "
                + "run ferry resolve \(record.path) --keep local|remote|both")
        case .local: return .transfer(.upload)
        case .remote: return .transfer(.download)
        case .newer:
            switch newerSide(record) {
            case .local?: return .transfer(.upload)
            case .remote?: return .transfer(.download)
            case nil: return keepBoth(record, settings: settings)
            }
        case .keepBoth: return keepBoth(record, settings: settings)
        }
    }

    /// The newer version keeps the name; the other is renamed to the conflict copy on its
    /// side first. On a tie, or when the remote keeps no times, the local copy is renamed.
    static func keepBoth(_ record: FileRecord, settings: SyncPlanSettings) -> Decision {
        let loser: FileAction = newerSide(record) == .local ? .keepBothRemoteLoses : .keepBothLocalLoses
        return .move(loser, target: settings.conflictPath(for: record.path))
    }

    enum Side { case local, remote }

    /// Which side's modification time is later; nil on a tie (at the precision of the
    /// coarser side) or when the remote has no time.
    static func newerSide(_ record: FileRecord) -> Side? {
        guard let local = record.local?.modifiedNanos, let remote = record.remote?.modifiedNanos else { return nil }
        let second: Int64 = 1_000_000_000
        let coarse = remote % second == 0 || local % second == 0
        let localTime = coarse ? floorDiv(local, second) : local
        let remoteTime = coarse ? floorDiv(remote, second) : remote
        if localTime == remoteTime { return nil }
        return localTime > remoteTime ? .local : .remote
    }

    private static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : (value - divisor + 1) / divisor
    }
}
