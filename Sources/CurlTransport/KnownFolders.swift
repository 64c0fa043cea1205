import FerryPluginAPI
import Synchronization

/// Folders known to exist on the server, so that a run sends `MKCOL` once per folder, and
/// the folders being created right now, so that concurrent transfers into one new folder
/// send one `MKCOL` between them: the others wait for its outcome. Some servers answer
/// `409 Conflict` to the second of two `MKCOL`s of the same path in flight at once, which
/// failed files for good (3 of 300 into new folders in one trial).
public final class KnownFolders: Sendable {
    private struct State {
        var known: Set<RelativePath> = []
        var creating: [RelativePath: Task<Void, any Error>] = [:]
        var rootWasMissing = false
    }

    private let state = Mutex(State())
    public init() {}
    public func contains(_ path: RelativePath) -> Bool { state.withLock { $0.known.contains(path) } }
    public func insert(_ path: RelativePath) { state.withLock { _ = $0.known.insert(path) } }
    /// A listing found the remote's own folder missing: the first folder made in it makes
    /// the root first (`rootWasMissing`), rather than learning it from a refused `MKCOL`.
    public func noteRootMissing() { state.withLock { $0.rootWasMissing = true } }
    /// Whether a listing found the root missing and it is not known to exist since.
    public var rootWasMissing: Bool { state.withLock { $0.rootWasMissing && !$0.known.contains(.root) } }
    /// Forgets a folder and everything below it.
    public func remove(_ path: RelativePath) {
        state.withLock { state in state.known = state.known.filter { $0.relative(to: path) == nil } }
    }

    /// Makes sure `path` and every folder above it exist, top down (a server creates a
    /// folder only inside one that exists), `create` running once per folder not yet
    /// known, as `ensure` does for one.
    public func ensureDownTo(_ path: RelativePath,
                             create: @escaping @Sendable (RelativePath) async throws(BackendError) -> Void) async throws(BackendError) {
        if contains(path) { return }
        var current = RelativePath.root
        for component in path.components {
            current = try current.appending(component)
            let folder = current
            try await ensure(folder) { () async throws(BackendError) in try await create(folder) }
        }
    }

    /// Makes sure `path` exists: returns at once when it is known to, waits for the
    /// creation in flight when another caller started one, and otherwise runs `create` (as
    /// the one creation in flight) and remembers the folder when it succeeds. A failure is
    /// every waiter's failure; the next call tries again.
    public func ensure(_ path: RelativePath,
                       create: @escaping @Sendable () async throws(BackendError) -> Void) async throws(BackendError) {
        let creation: Task<Void, any Error>? = state.withLock { state in
            if state.known.contains(path) { return nil }
            if let running = state.creating[path] { return running }
            // The task reaches the lock only after this closure has stored it.
            let task = Task<Void, any Error> {
                do {
                    try await create()
                    self.state.withLock { state in
                        state.known.insert(path)
                        state.creating[path] = nil
                    }
                } catch {
                    self.state.withLock { state in state.creating[path] = nil }
                    throw error
                }
            }
            state.creating[path] = task
            return task
        }
        guard let creation else { return }
        do {
            try await creation.value
        } catch let error as BackendError {
            throw error
        } catch {
            throw BackendError(.io, "cannot create the folder", path: path.description, cause: "\(error)")
        }
    }
}
