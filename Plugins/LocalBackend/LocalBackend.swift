import FerryPluginAPI

/// A remote that is a folder on this machine (another disk, a NAS mount, a backup folder).
///
/// Uploads are written to a temporary name beside the target, flushed to disk, given the
/// source's modification time and renamed into place, so a reader never sees a partial
/// file under its final name. An interrupted upload leaves its temporary file, which the
/// next attempt continues by appending when the core says the source is unchanged.
public struct LocalBackend: Backend {
    public let root: String

    public init(root: String) {
        self.root = LocalFileSystem.absolute(root)
    }

    public var capabilities: BackendCapabilities { Self.plugin.capabilities }
    public var displayName: String { "local:\(root)" }

    public static let plugin = BackendPlugin(
        type: "local",
        summary: "a folder on this machine (another disk, a mounted share)",
        options: [.init("path", .path, required: true, summary: "the folder that holds the remote's files")],
        urlSchemes: ["file"],
        acceptsBarePaths: true,
        capabilities: BackendCapabilities(
            resumableUpload: true, rangedDownload: true, serverSideMove: true,
            preservesModificationTime: true, listingHasETags: false, atomicUpload: true, serverSideCopy: true),
        make: { settings throws(BackendError) in LocalBackend(root: try settings.required("path")) }
    )

    func absolute(_ path: RemotePath) -> String {
        LocalFileSystem.join(root, path.string)
    }

    public func list(_ directory: RemotePath) async throws(BackendError) -> [RemoteEntry] {
        let folder = absolute(directory)
        return try await BlockingIO.run { () throws(BackendError) -> [RemoteEntry] in
            guard let info = try LocalFileSystem.metadataFollowingLinks(folder) else {
                throw BackendError(.notFound, "folder does not exist", path: folder)
            }
            guard info.kind == .directory else {
                throw BackendError(.notFound, "not a folder", path: folder)
            }
            var entries: [RemoteEntry] = []
            for name in try LocalFileSystem.directoryEntries(folder) where !TemporaryName.isTemporary(name) {
                guard let path = try? directory.appending(name),
                      let meta = try LocalFileSystem.metadata(LocalFileSystem.join(folder, name)) else { continue }
                switch meta.kind {
                case .file:
                    entries.append(RemoteEntry(path: path, kind: .file, size: meta.size, modifiedNanos: meta.modifiedNanos))
                case .directory:
                    entries.append(RemoteEntry(path: path, kind: .directory, size: 0, modifiedNanos: meta.modifiedNanos))
                case .symbolicLink, .other:
                    continue
                }
            }
            return entries.sorted { $0.path < $1.path }
        }
    }

    public func stat(_ path: RemotePath) async throws(BackendError) -> RemoteEntry? {
        let target = absolute(path)
        return try await BlockingIO.run { () throws(BackendError) -> RemoteEntry? in
            guard let meta = try LocalFileSystem.metadata(target) else { return nil }
            switch meta.kind {
            case .file: return RemoteEntry(path: path, kind: .file, size: meta.size, modifiedNanos: meta.modifiedNanos)
            case .directory: return RemoteEntry(path: path, kind: .directory, size: 0, modifiedNanos: meta.modifiedNanos)
            case .symbolicLink, .other: return nil
            }
        }
    }

    public func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        guard let parent = request.destination.parent else {
            throw BackendError(.invalidName, "cannot upload onto the remote's root folder")
        }
        let folder = absolute(parent)
        let final = absolute(request.destination)
        let temporary = LocalFileSystem.join(folder, TemporaryName.for(request.destination.name))
        let destination = request.destination
        return try await BlockingIO.run { () throws(BackendError) -> UploadResult in
            try LocalFileSystem.makeDirectories(folder)
            if let existing = try LocalFileSystem.metadata(final), existing.kind == .directory {
                throw BackendError(.alreadyExists, "a folder is in the way of the file", path: final)
            }
            let source = try OpenFile(request.source, mode: .read)
            let sourceMeta = try source.metadata()
            guard sourceMeta.size == request.size, sourceMeta.modifiedNanos == request.modifiedNanos else {
                throw BackendError(.changedDuringTransfer, "source changed since it was scanned", path: request.source)
            }
            var start: Int64 = 0
            if request.mayResume, let partial = try LocalFileSystem.metadata(temporary),
               partial.kind == .file, partial.size <= request.size {
                start = partial.size
            }
            let output = try OpenFile(temporary, mode: start > 0 ? .writeKeep : .writeTruncate)
            if start > 0 { try output.truncate(to: start) }
            try ChunkedCopy.copy(from: source, at: start, to: output, at: start,
                                 count: request.size - start, observer: observer)
            guard try output.metadata().size == request.size else {
                throw BackendError(.io, "temporary file has the wrong size after writing", path: temporary, retryable: true)
            }
            // The source must still be the version that was copied before the copy goes
            // under its final name: a file rewritten in place during the copy would
            // otherwise appear torn (old bytes, then new ones). Found by the soak suite.
            let after = try source.metadata()
            guard after.size == request.size, after.modifiedNanos == request.modifiedNanos,
                  let current = try LocalFileSystem.metadata(request.source), current.inode == sourceMeta.inode else {
                throw BackendError(.changedDuringTransfer, "the file changed while it was being sent", path: request.source)
            }
            try output.sync()
            try output.setModificationTime(nanos: request.modifiedNanos)
            try LocalFileSystem.rename(temporary, to: final)
            return UploadResult(
                entry: RemoteEntry(path: destination, kind: .file, size: request.size, modifiedNanos: request.modifiedNanos),
                bytesSent: request.size - start, resumedFrom: start)
        }
    }

    public func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        let sourcePath = absolute(request.source)
        let expected = request.expected
        return try await BlockingIO.run { () throws(BackendError) -> DownloadResult in
            let source = try OpenFile(sourcePath, mode: .read)
            let meta = try source.metadata()
            guard meta.kind == .file else { throw BackendError(.notFound, "not a file", path: sourcePath) }
            // Never more than the listing said, as on every backend: the free-space check
            // before the download counted on the listed size.
            guard meta.size <= expected.size else {
                throw BackendError(.changedDuringTransfer,
                                   "the file grew from the listed \(expected.size) bytes to \(meta.size) since it was listed; it will be listed again",
                                   path: sourcePath, retryable: true)
            }
            let unchanged = meta.size == expected.size
                && (expected.modifiedNanos == nil || expected.modifiedNanos == meta.modifiedNanos)
            var start = request.offset
            if !unchanged || start > meta.size { start = 0 }
            let output = try OpenFile(request.partialFile, mode: .writeKeep)
            if try output.metadata().size != start { try output.truncate(to: start) }
            try ChunkedCopy.copy(from: source, at: start, to: output, at: start,
                                 count: meta.size - start, observer: observer)
            try output.sync()
            let after = try source.metadata()
            guard after.size == meta.size, after.modifiedNanos == meta.modifiedNanos else {
                throw BackendError(.changedDuringTransfer, "remote file changed while being read", path: sourcePath)
            }
            return DownloadResult(
                entry: RemoteEntry(path: request.source, kind: .file, size: meta.size, modifiedNanos: meta.modifiedNanos),
                bytesReceived: meta.size - start, resumedFrom: start)
        }
    }

    public func makeDirectory(_ path: RemotePath) async throws(BackendError) {
        let target = absolute(path)
        try await BlockingIO.run { () throws(BackendError) in try LocalFileSystem.makeDirectories(target) }
    }

    public func move(from source: RemotePath, to destination: RemotePath, overwrite: Bool) async throws(BackendError) {
        let from = absolute(source)
        let to = absolute(destination)
        try await BlockingIO.run { () throws(BackendError) in
            guard try LocalFileSystem.metadata(from) != nil else {
                throw BackendError(.notFound, "nothing to move", path: from)
            }
            if !overwrite, try LocalFileSystem.metadata(to) != nil {
                throw BackendError(.alreadyExists, "target exists", path: to)
            }
            try LocalFileSystem.makeDirectories(LocalFileSystem.parentPath(to))
            try LocalFileSystem.rename(from, to: to)
        }
    }

    /// Copies through a temporary name beside the target (flushed, given the source's
    /// modification time, then renamed), like an upload, so a reader never sees a partial copy.
    public func copy(from source: RemotePath, to destination: RemotePath, overwrite: Bool) async throws(BackendError) {
        guard let parent = destination.parent else {
            throw BackendError(.invalidName, "cannot copy onto the remote's root folder")
        }
        let from = absolute(source)
        let to = absolute(destination)
        let folder = absolute(parent)
        // Not the upload's temporary name: an interrupted copy must never look like the
        // partial upload of this destination, which a later upload could continue.
        let temporary = LocalFileSystem.join(folder, TemporaryName.for(destination.name + Self.copyMarker))
        try await BlockingIO.run { () throws(BackendError) in
            let input = try OpenFile(from, mode: .read)
            let meta = try input.metadata()
            guard meta.kind == .file else {
                throw BackendError(.unsupported, "only files can be copied", path: from)
            }
            if let existing = try LocalFileSystem.metadata(to) {
                guard existing.kind != .directory else {
                    throw BackendError(.alreadyExists, "a folder is in the way of the copy", path: to)
                }
                guard overwrite else { throw BackendError(.alreadyExists, "target exists", path: to) }
            }
            try LocalFileSystem.makeDirectories(folder)
            do throws(BackendError) {
                let output = try OpenFile(temporary, mode: .writeTruncate)
                try ChunkedCopy.copy(from: input, at: 0, to: output, at: 0, count: meta.size, observer: NullTransferObserver())
                guard try output.metadata().size == meta.size else {
                    throw BackendError(.changedDuringTransfer, "the file changed while it was being copied", path: from)
                }
                try output.sync()
                try output.setModificationTime(nanos: meta.modifiedNanos)
                try LocalFileSystem.rename(temporary, to: to)
            } catch {
                try? LocalFileSystem.removeFile(temporary)
                throw error
            }
        }
    }

    static let copyMarker = ".ferry-copy"

    public func delete(_ path: RemotePath) async throws(BackendError) {
        let target = absolute(path)
        try await BlockingIO.run { () throws(BackendError) in
            guard let meta = try LocalFileSystem.metadata(target) else { return }
            if meta.kind == .directory {
                try LocalFileSystem.removeDirectory(target)
            } else {
                try LocalFileSystem.removeFile(target)
            }
        }
    }

    /// A folder on this machine answers as long as its root can be looked at; listing it
    /// (the default) would read a whole folder for a yes or no.
    public func checkReachable() async throws(BackendError) {
        let folder = root
        _ = try await BlockingIO.run { () throws(BackendError) in try LocalFileSystem.metadataFollowingLinks(folder) }
    }
}
