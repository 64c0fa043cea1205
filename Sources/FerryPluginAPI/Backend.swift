import Foundation

/// A place files can be sent to and fetched from. Plugins implement this.
///
/// Paths are relative to the backend's root. Required operations are few; what a backend
/// can do beyond them is declared in `capabilities`.
public protocol Backend: Sendable {
    var capabilities: BackendCapabilities { get }
    /// A short, secret-free description for messages, e.g. `local:/srv/backup`.
    var displayName: String { get }

    /// The direct children of a folder. Throws `notFound` when the folder does not exist.
    func list(_ directory: RelativePath) async throws(BackendError) -> [RemoteEntry]
    /// The entry at `path`, or nil when nothing is there.
    func stat(_ path: RelativePath) async throws(BackendError) -> RemoteEntry?
    /// Sends a file so that it appears complete under its final name, or not at all.
    func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult
    /// Fills a local partial file with a remote file's bytes.
    func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult
    /// Creates a folder and any missing parents; succeeds when it exists already.
    func makeDirectory(_ path: RelativePath) async throws(BackendError)
    /// Renames a file; with `overwrite: false` an existing target is an `alreadyExists` error.
    func move(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError)
    /// Removes a file, or an empty folder.
    func delete(_ path: RelativePath) async throws(BackendError)
    /// One cheap request that shows whether the backend answers at all; used to tell an
    /// outage from a failure of one file, and to notice when an offline backend is back.
    /// Any answer (even "not found") is success; only failing to get one throws.
    func checkReachable() async throws(BackendError)

    // Optional operations: the extension below gives each a default, so a backend
    // implements only what it can do.

    /// Copies a file on the backend, without sending its bytes again; creates the
    /// target's parents. With `overwrite: false` an existing target is an `alreadyExists`
    /// error. Backends that can do this declare `capabilities.serverSideCopy`; the default
    /// throws `unsupported`.
    func copy(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError)

    /// Removes files (not folders), as many per request as the backend takes
    /// (`capabilities.maxDeleteBatch`). Returns the paths that were not deleted, each with
    /// its own error; a missing file counts as deleted, as with `delete`. A failure of the
    /// whole request (no answer, a refusal of the request itself) throws, and then no path
    /// is known to be deleted. The default deletes one path at a time.
    func deleteFiles(_ paths: [RelativePath]) async throws(BackendError) -> [RelativePath: BackendError]

    /// The bytes in `range` of the version of a file that `expected` describes (its size,
    /// and its ETag or modification time where known), in memory: a window of a few
    /// megabytes, never a whole large file. Backends that can declare
    /// `capabilities.rangedRead`; the default throws `unsupported`. A file that is no
    /// longer that version, or that holds fewer bytes than asked, is a retryable
    /// `changedDuringTransfer` (never bytes of another version).
    func read(_ path: RelativePath, range: Range<Int64>, expected: RemoteEntry,
              observer: any TransferObserver) async throws(BackendError) -> Data

    /// `capabilities` plus what can only be learnt by asking the backend (a server that
    /// honours partial uploads, keeps modification times, …). The first call may send
    /// requests (a WebDAV backend writes and removes a small probe file in its root); the
    /// answer is kept for the backend's lifetime, so later calls are free. `capabilities`
    /// reflects what has been learnt so far. The default returns `capabilities`.
    func discoverCapabilities() async throws(BackendError) -> BackendCapabilities

    /// Aborts the uploads left unfinished below `folder` (S3 multipart uploads, whose
    /// parts take space until completed or aborted) that were started more than
    /// `olderThanSeconds` ago — nil: the backend's own setting, which may be never — except
    /// those going to a path in `keeping`, which the journal means to continue. Returns
    /// what it aborted. The default does nothing: most backends leave nothing behind.
    func abortAbandonedUploads(below folder: RelativePath, keeping: Set<RelativePath>,
                               olderThanSeconds: Int64?) async throws(BackendError) -> [AbandonedUpload]
}

extension Backend {
    public func checkReachable() async throws(BackendError) {
        do {
            _ = try await list(.root)
        } catch where !error.suggestsOutage {
            return
        }
    }

    public func copy(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        throw BackendError(.unsupported, "\(displayName) cannot copy files on the server", path: source.description)
    }

    public func read(_ path: RelativePath, range: Range<Int64>, expected: RemoteEntry,
                     observer: any TransferObserver) async throws(BackendError) -> Data {
        throw BackendError(.unsupported, "\(displayName) cannot read part of a file", path: path.description)
    }

    public func deleteFiles(_ paths: [RelativePath]) async throws(BackendError) -> [RelativePath: BackendError] {
        try await deleteOneAtATime(paths) { path throws(BackendError) in try await delete(path) }
    }

    /// `deleteFiles` as one request per path, each sent by `remove`: a path's failure is
    /// kept for that path, except one that suggests the backend is gone, which is the whole
    /// call's failure and throws.
    public func deleteOneAtATime(_ paths: [RelativePath],
                                 with remove: (RelativePath) async throws(BackendError) -> Void) async throws(BackendError) -> [RelativePath: BackendError] {
        var failures: [RelativePath: BackendError] = [:]
        for path in paths {
            do {
                try await remove(path)
            } catch where error.suggestsOutage {
                throw error
            } catch {
                failures[path] = error
            }
        }
        return failures
    }

    public func discoverCapabilities() async throws(BackendError) -> BackendCapabilities {
        capabilities
    }

    public func abortAbandonedUploads(below folder: RelativePath, keeping: Set<RelativePath>,
                                      olderThanSeconds: Int64?) async throws(BackendError) -> [AbandonedUpload] {
        []
    }

    /// One folder's listing, listed again after each failure for as long as `waitToRetry`
    /// (asked with the error and the number of failures so far) waits and says yes: the
    /// caller's retry policy, on the caller's clock. A missing folder is not asked about.
    public func list(_ folder: RelativePath,
                     waitToRetry: @Sendable (BackendError, Int) async -> Bool) async throws(BackendError) -> [RemoteEntry] {
        try await Self.retrying({ error, failures in error.code == .notFound ? false : await waitToRetry(error, failures) }) {
            () async throws(BackendError) in try await list(folder)
        }
    }

    /// One path's entry, asked again after each failure for as long as `waitToRetry` waits
    /// and says yes, as `list(_:waitToRetry:)` does for a folder's listing.
    public func stat(_ path: RelativePath,
                     waitToRetry: @Sendable (BackendError, Int) async -> Bool) async throws(BackendError) -> RemoteEntry? {
        try await Self.retrying(waitToRetry) { () async throws(BackendError) in try await stat(path) }
    }

    /// `body`, run again after each failure for as long as `waitToRetry` (asked with the
    /// error and the number of failures so far) waits and says yes.
    private static func retrying<T>(_ waitToRetry: (BackendError, Int) async -> Bool,
                                    _ body: () async throws(BackendError) -> T) async throws(BackendError) -> T {
        var failures = 0
        while true {
            do {
                return try await body()
            } catch {
                failures += 1
                guard await waitToRetry(error, failures) else { throw error }
            }
        }
    }

    /// Every file below `directory`, walked one folder at a time (servers refuse deep
    /// listings). A missing top folder is an empty tree.
    ///
    /// `hints` are folders (below `directory`) that may exist although listings do not
    /// show them: nginx's WebDAV module leaves names starting with `.` out of its listings.
    /// A hinted folder the walk did not reach is listed directly; one that does not exist
    /// is skipped.
    ///
    /// `waitToRetry` is asked after each failed folder listing (with the error and the number
    /// of failures so far); it waits before that folder is listed again and says yes, or
    /// says no to give up. Retrying per folder keeps one transient error from restarting
    /// the whole walk.
    ///
    /// `bounds` stops a tree without end: a folder deeper than `maxDepth` below
    /// `directory`, or more than `maxEntries` files and folders, is a permanent error that
    /// names the bound.
    public func listTree(
        _ directory: RelativePath, hints: Set<RelativePath> = [], bounds: ListingBounds = .standard,
        waitToRetry: @Sendable (BackendError, Int) async -> Bool = { _, _ in false }
    ) async throws(BackendError) -> [RemoteEntry] {
        func list(_ folder: RelativePath) async throws(BackendError) -> [RemoteEntry] {
            try await self.list(folder, waitToRetry: waitToRetry)
        }
        var entriesSeen = 0
        let topDepth = directory.components.count
        func admit(_ child: RemoteEntry) throws(BackendError) {
            entriesSeen += 1
            if entriesSeen > bounds.maxEntries { throw bounds.tooMany(below: directory) }
            if child.kind == .directory, child.path.components.count - topDepth > bounds.maxDepth {
                throw bounds.tooDeep(child.path, below: directory)
            }
        }
        var files: [RemoteEntry] = []
        var visited: Set<RelativePath> = []
        var pending: [RelativePath] = [directory]
        var isTop = true
        while true {
            if pending.isEmpty {
                // Hinted folders whose parent was listed but who were not in it.
                pending = hints.filter { hint in
                    !visited.contains(hint) && hint.parent.map { visited.contains($0) } == true
                }.sorted()
                if pending.isEmpty { break }
                for hint in pending { visited.insert(hint) }
                var found: [RelativePath] = []
                for hint in pending {
                    do {
                        let children = try await list(hint)
                        found.append(hint)
                        for child in children {
                            try admit(child)
                            switch child.kind {
                            case .directory: if !visited.contains(child.path) { found.append(child.path) }
                            case .file: files.append(child)
                            }
                        }
                    } catch where error.code == .notFound {
                        continue
                    }
                }
                pending = found.filter { !visited.contains($0) }
                continue
            }
            let folder = pending.removeLast()
            visited.insert(folder)
            let children: [RemoteEntry]
            do {
                children = try await list(folder)
            } catch where error.code == .notFound && isTop {
                return []
            }
            isTop = false
            for child in children {
                try admit(child)
                switch child.kind {
                case .directory: pending.append(child.path)
                case .file: files.append(child)
                }
            }
        }
        return files
    }
}
