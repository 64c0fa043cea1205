/// The folders below an anchor that a run of paths lands in, each opened once while the
/// paths stay in it: transfers come in path order, so mostly several files to a folder,
/// and opening a folder is a walk of its whole path. Only the last folder is kept, for one
/// batch: a folder moved or removed meanwhile is never used through an old descriptor for
/// long.
public struct FolderWalkCache {
    public let root: AnchoredFolder
    /// Missing folders are made with these permissions; nil: never made.
    private let creating: UInt32?
    private var last: (path: String, folder: AnchoredFolder)?

    public init(root: AnchoredFolder, creating permissions: UInt32? = nil) {
        self.root = root
        creating = permissions
    }

    /// The folder `relative` below the root ("" for the root itself).
    public mutating func folder(_ relative: String) throws(SystemError) -> AnchoredFolder {
        if let last, last.path == relative { return last.folder }
        let folder = try root.folder(relative, creating: creating)
        last = (relative, folder)
        return folder
    }
}
