/// The state of one tracked file (see DESIGN.md, "Per-file status").
public enum FileStatus: String, Codable, Sendable, CaseIterable {
    /// Seen locally, not meant to leave (pull mode, or not yet settled).
    case localOnly
    /// A local change (new, modified, or a deletion to propagate) waits for upload.
    case needsUpload
    /// A transfer to the remote is under way; its partial upload may be continued.
    case uploading
    /// A remote change waits for download.
    case needsDownload
    /// A transfer from the remote is under way; its partial file may be continued.
    case downloading
    /// Both sides equal what the journal recorded at the last sync.
    case inSync
    /// Both sides changed since the last sync; a person or a policy decides.
    case conflict
    /// Failed for good (after retries, or at once for a permanent error); see `lastError`.
    case syncError
    /// In sync on the remote, removed locally by the folder's cache budget (`local_limit:`):
    /// a pull does not fetch it again and a sync does not take its absence for a deletion.
    /// `ferry pull FOLDER PATH` brings it back.
    case remoteOnly

    /// Statuses with work left to do in the current run.
    public var isPending: Bool {
        switch self {
        case .needsUpload, .uploading, .needsDownload, .downloading: return true
        case .localOnly, .inSync, .conflict, .syncError, .remoteOnly: return false
        }
    }
}

/// What a pending file's job does.
public enum FileAction: String, Codable, Sendable, CaseIterable {
    case upload
    case download
    /// Remove the remote copy (a mirror push of a file gone locally).
    case deleteRemote
    /// Remove the local copy (a mirror pull of a file gone from the remote).
    case deleteLocal
    /// Rename the remote copy to `moveTarget` (two-way sync: the file was renamed locally).
    case moveRemote
    /// Keep both versions of a conflict, the local one losing: rename it to the conflict
    /// name `moveTarget`, then upload that and download the remote version.
    case keepBothLocalLoses
    /// Keep both versions of a conflict, the remote one losing: rename it on the remote to
    /// the conflict name `moveTarget`, then download that and upload the local version.
    case keepBothRemoteLoses
    /// Both sides hold a file of the same size and modification time that no sync vouched
    /// for: read the remote copy and compare the bytes. Equal bytes are recorded as in
    /// sync; different ones (or a file too large to compare) go to the mode's rule for a
    /// changed file, as if the times had differed.
    case compareContent

    /// The status of a file whose job is this action and has not started: changes that
    /// go to the remote wait as needsUpload, changes that come from it as needsDownload.
    public var pendingStatus: FileStatus {
        switch self {
        case .upload, .deleteRemote, .moveRemote, .keepBothRemoteLoses: return .needsUpload
        case .download, .deleteLocal, .keepBothLocalLoses, .compareContent: return .needsDownload
        }
    }

    public var isDeletion: Bool { self == .deleteRemote || self == .deleteLocal }
}
