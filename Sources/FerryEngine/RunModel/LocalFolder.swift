import FerryPluginAPI
import FerrySystem

/// A folder pair's local side as a run writes to it: its folder and its local trash, each
/// an `AnchoredFolder`, so that no create, rename or delete of a run goes through a
/// symbolic link planted in the folder (statically, or swapped in for a folder while a
/// slow transfer runs). Paths are the pair's relative file paths.
///
/// Sendable: its stored properties are constants.
package struct LocalFolder: Sendable {
    package let root: AnchoredFolder
    /// The trash folder's path (inside the root by default, anywhere when configured).
    package let trashPath: String

    /// Opens the pair's local folder (which the run's scan or a pull already made).
    package init(pair: FolderPair) throws(BackendError) {
        root = try BackendError.catching { try AnchoredFolder(pair.localRoot) }
        trashPath = pair.trash.localFolder(root: pair.localRoot)
    }

    /// Where a file's trash copy goes (`target` is its place in the trash): the anchor that
    /// holds it and the path below that anchor. A trash inside the folder is reached from
    /// the folder's own anchor, so moving a file into it is one `renameat`.
    func trashLocation(_ target: String) throws(BackendError) -> (folder: AnchoredFolder, path: String) {
        let prefix = root.path.hasSuffix("/") ? root.path : root.path + "/"
        if trashPath.hasPrefix(prefix) {
            return (root, String(trashPath.dropFirst(prefix.count)) + "/" + target)
        }
        return (try BackendError.catching { try AnchoredFolder(trashPath, create: true) }, target)
    }

    /// The parent of a relative path ("" for a file at the top).
    package static func parent(_ relative: String) -> String {
        guard let slash = relative.lastIndex(of: "/") else { return "" }
        return String(relative[..<slash])
    }

    /// The last name of a relative path.
    package static func name(of relative: String) -> String {
        relative.lastIndex(of: "/").map { String(relative[relative.index(after: $0)...]) } ?? relative
    }

    /// A temporary name beside `relative` (`TemporaryName`, ignored by every scan).
    package static func temporary(beside relative: String, suffix: String = "") -> String {
        let parent = parent(relative)
        let name = relative.split(separator: "/").last.map(String.init) ?? relative
        let temporary = TemporaryName.for(name + suffix)
        return parent.isEmpty ? temporary : parent + "/" + temporary
    }

    /// Moves `relative` into the trash at `target` (making the trash's folders).
    ///
    /// Never over what the trash holds already: a job resumed after a kill keeps the trash
    /// name its first attempt used, and that attempt may have filled it with another
    /// version. A taken name gets `.1`, `.2`, … appended.
    func moveToTrash(_ relative: String, target: String) throws(BackendError) {
        let (trash, path) = try trashLocation(target)
        try BackendError.catching {
            try trash.makeDirectories(Self.parent(path))
            var attempt = 0
            while true {
                let name = attempt == 0 ? path : path + ".\(attempt)"
                guard let refusal = renameRefusal(relative, to: name, in: trash) else { return }
                guard refusal.isAlreadyExists, attempt < Self.maxTrashSuffix else { throw refusal }
                attempt += 1
            }
        }
    }

    /// A rename into `folder` that never replaces; nil when done, else why not.
    private func renameRefusal(_ relative: String, to name: String, in folder: AnchoredFolder) -> SystemError? {
        do {
            try root.rename(relative, to: name, in: folder, replacing: false)
            return nil
        } catch {
            return error
        }
    }

    static let maxTrashSuffix = 999

    /// What is in the trash at `target`, if anything.
    package func trashed(_ target: String) throws(BackendError) -> FileMetadata? {
        let (trash, path) = try trashLocation(target)
        return try BackendError.catching { try trash.metadata(path) }
    }

    /// Removes what a cut-short download of `relative` left beside it (its partial file and
    /// ledger), once the file is no longer to be downloaded. Nothing there is fine; a
    /// failure leaves a hidden file every scan passes over, not a wrong one.
    package func removePartialDownload(of relative: String) {
        let partial = Self.temporary(beside: relative)
        try? root.removeFile(partial)
        try? root.removeFile(PartialFileLedger.path(forPartial: partial))
    }

    /// What is at `relative`, without following a link (nil when nothing is there).
    package func metadata(_ relative: String) throws(BackendError) -> FileMetadata? {
        try BackendError.catching { try root.metadata(relative) }
    }
}
