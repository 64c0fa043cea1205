import FerryPluginAPI
import FerrySystem
import Foundation
import Synchronization

/// A backend that keeps its files in memory, for tests of the engine that need no server
/// and no waiting. Faults are scripted: a path's next attempts fail with given errors, the
/// whole backend goes offline (every call fails as an unreachable server does) until the
/// test brings it back, and a path's upload can be held at a gate until the test opens it
/// or the transfer is cancelled.
///
/// Writers that share it meet what they meet on a real server: an upload that expects a
/// new name (`UploadRequest.expectsNewFile`) is refused when the name is taken, as S3's
/// `If-None-Match: *` is, and a move creates the target's folders, as every backend's does.
public final class InMemoryBackend: Backend {
    public struct StoredFile: Sendable, Equatable {
        public var data: Data
        public var modifiedNanos: Int64
        public var etag: String
    }

    private struct State {
        var files: [String: StoredFile] = [:]
        var folders: Set<String> = [""]
        var failures: [String: [BackendError]] = [:]
        var offline = false
        /// Calls refused while offline, probes included.
        var refusedWhileOffline = 0
        /// A scripted outage: it starts with the upload of this path and lasts this many calls.
        var outage: (path: String, calls: Int)?
        /// Calls still to refuse before a scripted outage ends.
        var outageCallsLeft = 0
        /// Every upload attempt per path, in order.
        var uploads: [String] = []
        var gates: Set<String> = []
        var waitingAtGate: Set<String> = []
        var nextETag = 1
        /// The server's clock for a store that lists its own time: a second later per write.
        var serverNanos: Int64 = 1_800_000_000 * 1_000_000_000
    }

    private let state = Mutex(State())
    private let keepsModificationTimes: Bool

    /// `keepsModificationTimes` false: an upload is listed with the time the store wrote it,
    /// not the file's (Apache, most WebDAV servers), one second after the write before.
    public init(keepsModificationTimes: Bool = true) {
        self.keepsModificationTimes = keepsModificationTimes
    }

    public var capabilities: BackendCapabilities {
        BackendCapabilities(serverSideMove: true, preservesModificationTime: keepsModificationTimes, listingHasETags: true, atomicUpload: true,
                            conditionalNewNames: true, atomicMove: true)
    }

    public var displayName: String { "memory" }

    // MARK: What a test scripts and reads

    /// The next uploads or downloads of `path` fail with these errors, in order (other calls
    /// on it, such as the stat before a retry, answer as usual).
    public func failNext(_ path: String, with errors: [BackendError]) {
        state.withLock { $0.failures[path, default: []] += errors }
    }

    /// Every call fails as an unreachable server's would, until `setOffline(false)`.
    public func setOffline(_ offline: Bool) {
        state.withLock { $0.offline = offline }
    }

    /// The backend goes offline when the upload of `path` starts (that upload fails as if the
    /// server had gone) and refuses `calls` calls in all, probes included, then answers again.
    /// `Int.max` keeps it offline for good.
    public func goOffline(atUploadOf path: String, refusing calls: Int) {
        state.withLock { $0.outage = (path, calls) }
    }

    /// Calls refused while the backend was offline.
    public var refusedWhileOffline: Int { state.withLock { $0.refusedWhileOffline } }

    /// Uploads of `path` wait at a gate until `open(path)` or until they are cancelled.
    public func hold(_ path: String) {
        state.withLock { _ = $0.gates.insert(path) }
    }

    public func open(_ path: String) {
        state.withLock { _ = $0.gates.remove(path) }
    }

    /// Whether an upload of `path` is waiting at its gate now.
    public func isWaitingAtGate(_ path: String) -> Bool {
        state.withLock { $0.waitingAtGate.contains(path) }
    }

    public var files: [String: StoredFile] { state.withLock { $0.files } }

    /// The paths of every upload attempt, in the order they were made.
    public var uploadAttempts: [String] { state.withLock { $0.uploads } }

    /// Stores a file as if another client had put it there.
    public func put(_ path: String, _ data: Data, modifiedNanos: Int64) {
        state.withLock { Self.store(path, data, modifiedNanos: modifiedNanos, in: &$0) }
    }

    private static func store(_ path: String, _ data: Data, modifiedNanos: Int64, in state: inout State) {
        state.files[path] = StoredFile(data: data, modifiedNanos: modifiedNanos, etag: "\"\(state.nextETag)\"")
        state.nextETag += 1
        addParents(of: path, in: &state)
    }

    private static func addParents(of path: String, in state: inout State) {
        var parent = path
        while let slash = parent.lastIndex(of: "/") {
            parent = String(parent[..<slash])
            state.folders.insert(parent)
        }
    }

    // MARK: Backend

    public func list(_ directory: RelativePath) async throws(BackendError) -> [RemoteEntry] {
        try check(directory.string)
        return try state.withLock { state throws(BackendError) -> [RemoteEntry] in
            let folder = directory.string
            guard state.folders.contains(folder) else {
                throw BackendError(.notFound, "no such folder", path: folder)
            }
            let prefix = folder.isEmpty ? "" : folder + "/"
            var entries: [RemoteEntry] = []
            for (path, file) in state.files where path.hasPrefix(prefix) && !path.dropFirst(prefix.count).contains("/") {
                entries.append(RemoteEntry(path: try RelativePath(path), kind: .file, size: Int64(file.data.count),
                                           modifiedNanos: file.modifiedNanos, etag: file.etag))
            }
            for path in state.folders where !path.isEmpty && path.hasPrefix(prefix) && !path.dropFirst(prefix.count).contains("/") {
                entries.append(RemoteEntry(path: try RelativePath(path), kind: .directory, size: 0, modifiedNanos: nil))
            }
            return entries.sorted { $0.path.string < $1.path.string }
        }
    }

    public func stat(_ path: RelativePath) async throws(BackendError) -> RemoteEntry? {
        try check(path.string)
        return try state.withLock { state throws(BackendError) -> RemoteEntry? in
            if let file = state.files[path.string] {
                return RemoteEntry(path: path, kind: .file, size: Int64(file.data.count), modifiedNanos: file.modifiedNanos,
                                   etag: file.etag)
            }
            return state.folders.contains(path.string) ? RemoteEntry(path: path, kind: .directory, size: 0, modifiedNanos: nil) : nil
        }
    }

    public func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        let path = request.destination.string
        state.withLock { state in
            state.uploads.append(path)
            if let outage = state.outage, outage.path == path {
                state.outage = nil
                state.offline = true
                state.outageCallsLeft = outage.calls
            }
        }
        try check(path, transfer: true)
        while state.withLock({ state in
            let held = state.gates.contains(path)
            if held { state.waitingAtGate.insert(path) } else { state.waitingAtGate.remove(path) }
            return held
        }) {
            if observer.isCancelled || Task.isCancelled {
                state.withLock { _ = $0.waitingAtGate.remove(path) }
                throw BackendError(.cancelled, "the transfer was cancelled", path: path)
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: request.source))
        } catch {
            throw BackendError(.io, "cannot read the source", path: request.source, cause: "\(error)")
        }
        // As every real backend does: a source that is no longer what was scanned is refused,
        // so the engine learns of the edit instead of booking the new bytes as the old version.
        if request.content == nil {
            let modified = (try? LocalFileSystem.metadata(request.source))??.modifiedNanos
            if Int64(data.count) != request.size || modified != request.modifiedNanos {
                throw BackendError(.changedDuringTransfer, "source changed since it was scanned", path: request.source)
            }
        }
        _ = observer.bytesTransferred(data.count)
        // The check and the write are one step, as a conditional write on a server is.
        let stored = try state.withLock { state throws(BackendError) -> StoredFile in
            if request.expectsNewFile, state.files[path] != nil {
                throw BackendError.anotherWriterCreated(path, cause: "the name is taken")
            }
            if !keepsModificationTimes { state.serverNanos += 1_000_000_000 }
            Self.store(path, data, modifiedNanos: keepsModificationTimes ? request.modifiedNanos : state.serverNanos, in: &state)
            return state.files[path]!
        }
        return UploadResult(entry: RemoteEntry(path: request.destination, kind: .file, size: Int64(data.count),
                                               modifiedNanos: stored.modifiedNanos, etag: stored.etag),
                            bytesSent: Int64(data.count), resumedFrom: 0)
    }

    public func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        let path = request.source.string
        try check(path, transfer: true)
        guard let file = state.withLock({ $0.files[path] }) else {
            throw BackendError(.notFound, "no such file", path: path)
        }
        do {
            try file.data.write(to: URL(fileURLWithPath: request.partialFile))
        } catch {
            throw BackendError(.io, "cannot write the partial file", path: request.partialFile, cause: "\(error)")
        }
        _ = observer.bytesTransferred(file.data.count)
        return DownloadResult(entry: RemoteEntry(path: request.source, kind: .file, size: Int64(file.data.count),
                                                 modifiedNanos: file.modifiedNanos, etag: file.etag),
                              bytesReceived: Int64(file.data.count), resumedFrom: 0)
    }

    public func makeDirectory(_ path: RelativePath) async throws(BackendError) {
        try check(path.string)
        state.withLock { state in
            var folder = path.string
            while !folder.isEmpty {
                state.folders.insert(folder)
                folder = folder.lastIndex(of: "/").map { String(folder[..<$0]) } ?? ""
            }
        }
    }

    public func move(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        try check(source.string)
        try state.withLock { state throws(BackendError) in
            guard let file = state.files[source.string] else { throw BackendError(.notFound, "no such file", path: source.string) }
            if !overwrite, state.files[destination.string] != nil {
                throw BackendError(.alreadyExists, "the target exists", path: destination.string)
            }
            state.files[source.string] = nil
            state.files[destination.string] = file
            Self.addParents(of: destination.string, in: &state)
        }
    }

    public func delete(_ path: RelativePath) async throws(BackendError) {
        try check(path.string)
        try state.withLock { state throws(BackendError) in
            let name = path.string
            if state.files.removeValue(forKey: name) != nil || !state.folders.contains(name) || name.isEmpty { return }
            // A folder goes only when empty, as the local backend's rmdir does: the stricter
            // of the real behaviours (a WebDAV DELETE takes a whole collection), so a test
            // that passes here does not lean on a recursive delete.
            let prefix = name + "/"
            if state.files.keys.contains(where: { $0.hasPrefix(prefix) }) || state.folders.contains(where: { $0.hasPrefix(prefix) }) {
                throw BackendError(.alreadyExists, "the folder is not empty", path: name)
            }
            state.folders.remove(name)
        }
    }

    public func checkReachable() async throws(BackendError) {
        try check(nil)
    }

    /// The scripted faults, in force for every call.
    private func check(_ path: String?, transfer: Bool = false) throws(BackendError) {
        let (refused, failure): (Bool, BackendError?) = state.withLock { state in
            if state.offline {
                state.refusedWhileOffline += 1
                if state.outageCallsLeft > 0 {
                    state.outageCallsLeft -= 1
                    if state.outageCallsLeft == 0 { state.offline = false }
                }
                return (true, nil)
            }
            if transfer, let path, var queued = state.failures[path], !queued.isEmpty {
                let next = queued.removeFirst()
                state.failures[path] = queued
                return (false, next)
            }
            return (false, nil)
        }
        if refused {
            throw BackendError(.unreachable, "connection refused", path: path)
        }
        if let failure { throw failure }
    }
}
