/// What happened to one side of a file since the last sync, from the journal's record of
/// that sync and what the side holds now.
public enum SideChange: String, Sendable, CaseIterable {
    /// Not there, and not there at the last sync either (or never synced).
    case absent
    /// There now, never synced.
    case created
    /// The same version as at the last sync.
    case unchanged
    /// A different version than at the last sync.
    case changed
    /// Gone since the last sync.
    case deleted

    /// The local side's change. A file is "last synced" only when both sides were recorded;
    /// a remote synced version without the local one is a local copy the journal stopped
    /// vouching for (`FileRecord.suspectEditInPlace`): a change, unless its bytes compare equal.
    static func local(of record: FileRecord) -> SideChange {
        let hasBase = record.syncedLocal != nil && record.syncedRemote != nil
        guard let local = record.local else { return hasBase ? .deleted : .absent }
        guard record.syncedRemote != nil else { return .created }
        guard let base = record.syncedLocal else { return .changed }
        return Planner.sameLocal(base, local) ? .unchanged : .changed
    }

    /// The remote side's change, from its synced version (also where the local one was
    /// dropped as unvouched).
    static func remote(of record: FileRecord) -> SideChange {
        let hasBase = record.syncedLocal != nil && record.syncedRemote != nil
        guard let remote = record.remote else { return hasBase ? .deleted : .absent }
        guard let base = record.syncedRemote else { return .created }
        return base.isSameVersion(as: remote) ? .unchanged : .changed
    }
}
