import FerryPluginAPI
import Synchronization

/// Folders known to exist on the server, so that a run sends `MKCOL` once per folder.
public final class KnownFolders: Sendable {
    private let folders = Mutex<Set<RemotePath>>([])
    public init() {}
    public func contains(_ path: RemotePath) -> Bool { folders.withLock { $0.contains(path) } }
    public func insert(_ path: RemotePath) { folders.withLock { _ = $0.insert(path) } }
    /// Forgets a folder and everything below it.
    public func remove(_ path: RemotePath) { folders.withLock { set in set = set.filter { $0.relative(to: path) == nil } } }
}
