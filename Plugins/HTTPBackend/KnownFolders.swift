import FerryPluginAPI
import Synchronization

/// Folders known to exist on the server, so that a run sends `MKCOL` once per folder.
final class KnownFolders: Sendable {
    private let folders = Mutex<Set<RemotePath>>([])
    func contains(_ path: RemotePath) -> Bool { folders.withLock { $0.contains(path) } }
    func insert(_ path: RemotePath) { folders.withLock { _ = $0.insert(path) } }
    /// Forgets a folder and everything below it.
    func remove(_ path: RemotePath) { folders.withLock { set in set = set.filter { $0.relative(to: path) == nil } } }
}
