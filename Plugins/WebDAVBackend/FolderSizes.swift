import FerryPluginAPI
import Synchronization

/// How many entries each folder held when this run last listed it (the plan's listing, or
/// a batch's), or made it: what a `Depth: 1` listing of it would cost now. Publishing a
/// batch of uploads learns their stored versions from one listing of their folder instead
/// of a `PROPFIND` each only where that listing is small next to the batch
/// (`listingIsCheaper`); a folder this run never listed is looked at file by file, since
/// it may hold a million entries.
final class FolderSizes: Sendable {
    private let sizes = Mutex<[RelativePath: Int]>([:])

    /// The folder was listed (or made, with 0) and held `count` entries.
    func record(_ folder: RelativePath, count: Int) {
        sizes.withLock { $0[folder] = count }
    }

    /// `count` files were put into the folder since.
    func add(_ count: Int, to folder: RelativePath) {
        sizes.withLock { sizes in sizes[folder].map { sizes[folder] = $0 + count } }
    }

    /// Whether one listing of `folder` costs less than a `PROPFIND` for each of `files`
    /// files in it: a listing entry is a few hundred bytes of one answer, a `PROPFIND` a
    /// round trip, so a listing of up to 4 entries per file (and 16 more) is taken.
    func listingIsCheaper(_ folder: RelativePath, files: Int) -> Bool {
        guard files >= 2, let size = sizes.withLock({ $0[folder] }) else { return false }
        return size <= 4 * files + 16
    }
}
