/// What a watched tree reports, in paths relative to the folder's root: the input of
/// `SettleTracker`.
public enum FolderChange: Sendable, Equatable {
    /// A file appeared complete (moved in).
    case appeared(String)
    /// A file was created or written to: open for writing until `closed`.
    case written(String)
    /// A writer closed the file.
    case closed(String)
    /// A file was deleted or moved away.
    case removed(String)
    /// The folder's content must be scanned: a new subfolder (files can land in it before
    /// its watch exists), a subfolder moved in, a lost kernel queue, an unwatchable folder.
    case rescan(folder: String, reason: RescanReason)
}

public enum RescanReason: String, Sendable, Equatable {
    case newFolder = "new folder"
    case movedFolder = "folder moved"
    case queueOverflow = "the kernel's event queue overflowed"
    case watchLimit = "the inotify watch limit is reached"
    case watchLost = "a watch was lost"
}
