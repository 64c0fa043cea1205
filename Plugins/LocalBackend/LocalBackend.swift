import FerryPluginAPI
import FerrySystem
import Foundation

/// A remote that is a folder on this machine (another disk, a NAS mount, a backup folder).
///
/// Uploads are written to a temporary name beside the target, flushed to disk, given the
/// source's modification time and renamed into place, so a reader never sees a partial
/// file under its final name. An interrupted upload leaves its temporary file, which the
/// next attempt continues by appending when the core says the source is unchanged. Small
/// files are staged and published in batches instead (`StagedUploadBackend`): written with
/// no name (`O_TMPFILE`), one flush for a batch's bytes, each named in place (`linkat`),
/// one flush for the names.
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
            resumableUpload: true, rangedDownload: true, rangedRead: true, serverSideMove: true,
            preservesModificationTime: true, listingHasETags: false, atomicUpload: true, serverSideCopy: true,
            conditionalNewNames: true, atomicMove: true),
        make: { settings throws(BackendError) in LocalBackend(root: try settings.required("path")) }
    )

    func absolute(_ path: RelativePath) -> String {
        LocalFileSystem.join(root, path.string)
    }

    /// The remote's folder, opened for operations below it that never follow a symbolic
    /// link (a link planted in the remote folder cannot send a write elsewhere). With
    /// `create`, a missing root is made first (an upload into a new remote).
    func anchor(creating create: Bool = false) throws(SystemError) -> AnchoredFolder {
        try AnchoredFolder(root, create: create)
    }

    public func list(_ directory: RelativePath) async throws(BackendError) -> [RemoteEntry] {
        let folder = absolute(directory)
        return try await BlockingIO.run { () throws(BackendError) -> [RemoteEntry] in
            let children: [(name: String, metadata: FileMetadata)]
            do throws(SystemError) {
                children = try anchor().entries(directory.string)
            } catch {
                throw error.isNotFound ? BackendError(.notFound, "folder does not exist", path: folder) : BackendError(error)
            }
            var entries: [RemoteEntry] = []
            for (name, meta) in children where !TemporaryName.isTemporary(name) {
                guard let path = try? directory.appending(name) else { continue }
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

    public func stat(_ path: RelativePath) async throws(BackendError) -> RemoteEntry? {
        try await BlockingIO.run { () throws(BackendError) -> RemoteEntry? in
            let meta: FileMetadata?
            do throws(SystemError) {
                meta = try anchor().metadata(path.string)
            } catch where error.isNotFound {
                return nil
            } catch {
                throw BackendError(error)
            }
            guard let meta else { return nil }
            switch meta.kind {
            case .file: return RemoteEntry(path: path, kind: .file, size: meta.size, modifiedNanos: meta.modifiedNanos)
            case .directory: return RemoteEntry(path: path, kind: .directory, size: 0, modifiedNanos: meta.modifiedNanos)
            case .symbolicLink, .other: return nil
            }
        }
    }

    public func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        try await write(request, observer: observer, flushing: true) { folder, staged throws -> UploadResult in
            try Self.putInPlace(staged, in: folder)
            return staged.result
        }
    }

    /// Renames a written upload from its temporary name to its name in `folder`. A folder
    /// in the way fails the upload (`alreadyExists`) and its temporary file is removed.
    static func putInPlace(_ staged: StagedUpload, in folder: AnchoredFolder) throws(BackendError) {
        let name = staged.result.entry.path.name
        if let file = staged.unnamedFile as? OpenFile {
            try nameUnnamed(file, staged, in: folder)
            return
        }
        do {
            // A new name is taken only while it is free: the rename itself refuses a file
            // another writer created since the listing.
            try folder.rename(staged.temporary.name, to: name, replacing: !staged.expectsNewFile)
        } catch {
            if error.isFolderInTheWay, (try? folder.metadata(name))??.kind == .directory {
                try? folder.removeFile(staged.temporary.name)
                throw BackendError(.alreadyExists, "a folder is in the way of the file", path: folder.fullPath(name))
            }
            if error.isAlreadyExists, staged.expectsNewFile {
                try? folder.removeFile(staged.temporary.name)
                throw .anotherWriterCreated(folder.fullPath(name))
            }
            throw BackendError(error)
        }
    }

    /// Names a staged upload written with no name. A name already taken by a file (a
    /// changed file sent again) is replaced in one step: the upload is named under its
    /// temporary name and renamed over it.
    private static func nameUnnamed(_ file: OpenFile, _ staged: StagedUpload, in folder: AnchoredFolder) throws(BackendError) {
        let name = staged.result.entry.path.name
        do throws(SystemError) {
            try folder.link(file, as: name)
            return
        } catch where error.isAlreadyExists {
            // Below: a file to replace, or a folder in the way, which the rename reports.
            if staged.expectsNewFile, (try? folder.metadata(name))??.kind == .file {
                throw .anotherWriterCreated(folder.fullPath(name))
            }
        } catch {
            throw BackendError(error)
        }
        do throws(SystemError) {
            try folder.removeFile(staged.temporary.name)
            try folder.link(file, as: staged.temporary.name)
        } catch {
            throw BackendError(error)
        }
        var named = staged
        named.unnamedFile = nil
        try putInPlace(named, in: folder)
    }

    /// Writes the source under its temporary name (continuing a partial one when the core
    /// allows), checks the source is still the version copied, gives the copy its time,
    /// and hands the target's folder (anchored, opened once for all of the file's names)
    /// and the staged copy to `finish`.
    private func write<Outcome: Sendable>(
        _ request: UploadRequest, observer: any TransferObserver, flushing: Bool,
        finish: @escaping @Sendable (AnchoredFolder, StagedUpload) throws -> Outcome
    ) async throws(BackendError) -> Outcome {
        try await BlockingIO.run { () throws(BackendError) -> Outcome in
            var folders = TripFolders(backend: self, creating: true)
            return try writeNow(request, observer: observer, flushing: flushing, folders: &folders, finish: finish)
        }
    }

    /// `write` on the calling thread, which must be a blocking one; `folders` opens the
    /// target's folder.
    private func writeNow<Outcome>(
        _ request: UploadRequest, observer: any TransferObserver, flushing: Bool, folders: inout TripFolders,
        finish: (AnchoredFolder, StagedUpload) throws -> Outcome
    ) throws(BackendError) -> Outcome {
        guard let parent = request.destination.parent else {
            throw BackendError(.invalidName, "cannot upload onto the remote's root folder")
        }
        let name = request.destination.name
        let temporaryName = TemporaryName.for(name, tag: request.temporaryTag)
        let temporaryPath = try parent.appending(temporaryName)
        let destination = request.destination
        return try BackendError.catching { () throws -> Outcome in
            // A folder in the way of the file is found by the rename (`putInPlace`), not
            // looked for here: one system call fewer for every file that has none.
            let folder = try folders.open(parent)
            // Content (an encrypted file) checks its own source; a plain source is looked at here.
            let source = request.content == nil ? try OpenFile(request.source, mode: .read) : nil
            let sourceMeta = try source?.metadata()
            if let sourceMeta, sourceMeta.size != request.size || sourceMeta.modifiedNanos != request.modifiedNanos {
                throw BackendError(.changedDuringTransfer, "source changed since it was scanned", path: request.source)
            }
            var start: Int64 = 0
            if request.mayResume, let partial = try folder.metadata(temporaryName), partial.kind == .file,
               partial.size <= request.size {
                // Content (an encrypted file) is continued only where what was written ends
                // as the content does at that point: it is its own bytes, made again.
                if let content = request.content {
                    if try Self.partial(temporaryName, in: folder, size: partial.size, endsLike: content) { start = partial.size }
                } else {
                    start = partial.size
                }
            }
            // A staged upload starting afresh is written with no name: named once in place,
            // it changes the folder once, where a temporary name made and then renamed
            // away changes it three times (21% and 9% of a first push of 1,000,000 files
            // went to `openat` and `renameat`). It is named only when published.
            let unnamed = start == 0 && !flushing ? folder.createUnnamedIfSuited(for: name) : nil
            let output = try unnamed
                ?? (start > 0 ? folder.open(temporaryName, .writeExisting) : Self.createAfresh(temporaryName, in: folder))
            if start > 0 { try output.truncate(to: start) }
            if let content = request.content {
                try ChunkedCopy.copy(from: content, at: start, to: output, at: start, count: request.size - start,
                                     observer: observer, sourceName: request.source, synced: flushing)
            } else if let source {
                try ChunkedCopy.copy(from: source, at: start, to: output, at: start,
                                     count: request.size - start, observer: observer, synced: flushing)
            }
            // A file made empty here holds exactly the bytes copied; a continued one is looked at.
            if start > 0, try output.metadata().size != request.size {
                throw SystemError(EIO, "temporary file has the wrong size after writing", path: output.path)
            }
            // The source must still be the version that was copied before the copy goes
            // under its final name: a file rewritten in place during the copy would
            // otherwise appear torn (old bytes, then new ones). Found by the soak suite.
            if let content = request.content {
                try content.verifySource()
            } else if let source, let sourceMeta {
                // The path still names the file copied (the same inode on the same disk,
                // which cannot be reused while it is open here), so what the path says of
                // it is what the open file would: one look, not two.
                let current = try withExtendedLifetime(source) { try LocalFileSystem.metadata(request.source) }
                guard let current, current.inode == sourceMeta.inode, current.device == sourceMeta.device,
                      current.size == request.size, current.modifiedNanos == request.modifiedNanos else {
                    throw BackendError(.changedDuringTransfer, "the file changed while it was being sent", path: request.source)
                }
            }
            if flushing { try output.sync() }
            try output.setModificationTime(nanos: request.modifiedNanos)
            // The check above came before the copy goes under its final name, so the
            // core need not look at the source again.
            let result = UploadResult(
                entry: RemoteEntry(path: destination, kind: .file, size: request.size, modifiedNanos: request.modifiedNanos),
                bytesSent: request.size - start, resumedFrom: start, verifiedSource: true)
            return try finish(folder, StagedUpload(temporary: temporaryPath, result: result, unnamedFile: unnamed,
                                                   expectsNewFile: request.expectsNewFile))
        }
    }

    /// Bytes compared at the end of a partial upload before content continues it.
    static let continuationCheckBytes: Int64 = 64 << 10

    /// Whether the last bytes of the partial file `name` (`size` bytes long) are the
    /// content's at the same place.
    private static func partial(_ name: String, in folder: AnchoredFolder, size: Int64,
                                endsLike content: any UploadContent) throws -> Bool {
        guard size > 0 else { return false }
        let count = Int(min(size, continuationCheckBytes))
        var written = [UInt8](repeating: 0, count: count)
        var expected = [UInt8](repeating: 0, count: count)
        let offset = size - Int64(count)
        let file = try folder.open(name, .read)
        // The partial file is on a local disk: one read gets all of it, bar a signal.
        guard try file.read(into: &written, at: offset) == count,
              try content.read(into: &expected, count: count, at: offset) == count else { return false }
        return written == expected
    }

    /// A new, empty file at `name`: what an earlier attempt left under the name is removed
    /// first, which is rare, so the removal is tried only when the create finds it.
    private static func createAfresh(_ name: String, in folder: AnchoredFolder) throws(SystemError) -> OpenFile {
        do {
            return try folder.open(name, .createNew)
        } catch where error.isAlreadyExists {
            try folder.removeFile(name)
            return try folder.open(name, .createNew)
        }
    }

    public func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        try await BlockingIO.run { () throws(BackendError) -> DownloadResult in
            var folders = TripFolders(backend: self, creating: false)
            return try fetch(request, observer: observer, folders: &folders)
        }
    }

    /// `download` on the calling thread, which must be a blocking one; `folders` opens the
    /// source's folder.
    private func fetch(_ request: DownloadRequest, observer: any TransferObserver,
                       folders: inout TripFolders) throws(BackendError) -> DownloadResult {
        let expected = request.expected
        guard let parent = request.source.parent else {
            throw BackendError(.invalidName, "the remote's root folder is not a file")
        }
        return try BackendError.catching { () throws -> DownloadResult in
            let (source, opened) = try folders.open(parent).openFile(request.source.name, .read)
            let meta = try opened ?? source.metadata()
            // Never more than the listing said, as on every backend: the free-space check
            // before the download counted on the listed size.
            guard meta.size <= expected.size else {
                throw BackendError(.changedDuringTransfer,
                                   "the file grew from the listed \(expected.size) bytes to \(meta.size) since it was listed; it will be listed again",
                                   path: source.path, retryable: true)
            }
            let unchanged = meta.size == expected.size
                && (expected.modifiedNanos == nil || expected.modifiedNanos == meta.modifiedNanos)
            var start = request.offset
            if !unchanged || start > meta.size { start = 0 }
            let output: OpenFile
            if let given = request.openPartial as? OpenFile {
                // Made empty for this download a moment ago, with no name (`downloadNow`).
                output = given
                start = 0
            } else {
                output = try OpenFile(request.partialFile, mode: .writeExisting)
                if try output.metadata().size != start { try output.truncate(to: start) }
            }
            try ChunkedCopy.copy(from: source, at: start, to: output, at: start,
                                 count: meta.size - start, observer: observer, synced: request.flush)
            if request.flush { try output.sync() }
            let after = try source.metadata()
            guard after.size == meta.size, after.modifiedNanos == meta.modifiedNanos else {
                throw BackendError(.changedDuringTransfer, "remote file changed while being read", path: source.path)
            }
            return DownloadResult(
                entry: RemoteEntry(path: request.source, kind: .file, size: meta.size, modifiedNanos: meta.modifiedNanos),
                bytesReceived: meta.size - start, resumedFrom: start)
        }
    }

    /// `range` of the file, when it still has the listed size and time, read the same
    /// before and after.
    public func read(_ path: RelativePath, range: Range<Int64>, expected: RemoteEntry,
                     observer: any TransferObserver) async throws(BackendError) -> Data {
        let sourcePath = path.string
        return try await BlockingIO.run { () throws(BackendError) -> Data in
            try BackendError.catching { () throws -> Data in
                let source = try anchor().open(sourcePath, .read)
                func isListedVersion(_ meta: FileMetadata) -> Bool {
                    meta.size == expected.size && (expected.modifiedNanos == nil || expected.modifiedNanos == meta.modifiedNanos)
                }
                let changed = BackendError(.changedDuringTransfer, "the file is no longer the \(expected.size) bytes listed",
                                           path: source.path, retryable: true)
                guard isListedVersion(try source.metadata()), range.lowerBound >= 0, range.upperBound <= expected.size else {
                    throw changed
                }
                var bytes = Data()
                bytes.reserveCapacity(range.count)
                var chunk = [UInt8](repeating: 0, count: Swift.min(ChunkedCopy.chunkSize, range.count))
                var position = range.lowerBound
                while position < range.upperBound {
                    if observer.isCancelled { throw BackendError(.cancelled, "transfer cancelled", path: source.path) }
                    let want = Int(Swift.min(Int64(chunk.count), range.upperBound - position))
                    if chunk.count > want { chunk.removeLast(chunk.count - want) }
                    let count = try source.read(into: &chunk, at: position)
                    guard count > 0 else { throw changed }
                    bytes.append(contentsOf: chunk[0..<count])
                    position += Int64(count)
                    let pause = observer.bytesTransferred(count)
                    if pause > .zero { ChunkedCopy.sleepBlocking(pause) }
                }
                guard isListedVersion(try source.metadata()) else { throw changed }
                return bytes
            }
        }
    }

    public func makeDirectory(_ path: RelativePath) async throws(BackendError) {
        try await BlockingIO.run { () throws(BackendError) in
            try BackendError.catching { () throws in try anchor(creating: true).makeDirectories(path.string) }
        }
    }

    public func move(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        try await BlockingIO.run { () throws(BackendError) in
            try BackendError.catching { () throws in
                let remote = try anchor()
                guard try remote.metadata(source.string) != nil else {
                    throw SystemError(ENOENT, "nothing to move", path: remote.fullPath(source.string))
                }
                if let parent = destination.parent, !parent.isRoot { try remote.makeDirectories(parent.string) }
                // Without overwrite the rename itself refuses an existing target (EEXIST), so
                // another writer cannot slip in between a check and the rename.
                try remote.rename(source.string, to: destination.string, replacing: overwrite)
            }
        }
    }

    /// Copies through a temporary name beside the target (flushed, given the source's
    /// modification time, then renamed), like an upload, so a reader never sees a partial copy.
    public func copy(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        guard let parent = destination.parent else {
            throw BackendError(.invalidName, "cannot copy onto the remote's root folder")
        }
        // Not the upload's temporary name: an interrupted copy must never look like the
        // partial upload of this destination, which a later upload could continue.
        let temporaryName = TemporaryName.for(destination.name + Self.copyMarker)
        let temporary = parent.isRoot ? temporaryName : parent.string + "/" + temporaryName
        try await BlockingIO.run { () throws(BackendError) in
            let remote = try BackendError.catching { () throws in try anchor() }
            if let kind = try BackendError.catching({ () throws in try remote.metadata(source.string)?.kind }), kind != .file {
                throw BackendError(.unsupported, "only files can be copied", path: remote.fullPath(source.string))
            }
            let input = try BackendError.catching { () throws in try remote.open(source.string, .read) }
            let meta = try BackendError.catching { () throws in try input.metadata() }
            if let existing = try BackendError.catching({ () throws in try remote.metadata(destination.string) }) {
                guard existing.kind != .directory else {
                    throw BackendError(.alreadyExists, "a folder is in the way of the copy", path: remote.fullPath(destination.string))
                }
                guard overwrite else { throw BackendError(.alreadyExists, "target exists", path: remote.fullPath(destination.string)) }
            }
            do throws(BackendError) {
                try BackendError.catching { () throws in
                    if !parent.isRoot { try remote.makeDirectories(parent.string) }
                    try remote.removeFile(temporary)
                }
                let output = try BackendError.catching { () throws in try remote.open(temporary, .createNew) }
                try ChunkedCopy.copy(from: input, at: 0, to: output, at: 0, count: meta.size, observer: NullTransferObserver(),
                                     synced: true)
                try BackendError.catching { () throws in
                    guard try output.metadata().size == meta.size else {
                        throw SystemError(EIO, "the file changed while it was being copied", path: input.path)
                    }
                    try output.sync()
                    try output.setModificationTime(nanos: meta.modifiedNanos)
                    try remote.rename(temporary, to: destination.string, replacing: overwrite)
                }
            } catch {
                try? remote.removeFile(temporary)
                throw error
            }
        }
    }

    static let copyMarker = ".ferry-copy"

    public func delete(_ path: RelativePath) async throws(BackendError) {
        try await BlockingIO.run { () throws(BackendError) in
            try BackendError.catching { () throws in
                let remote: AnchoredFolder
                do throws(SystemError) {
                    remote = try anchor()
                } catch where error.isNotFound {
                    return
                }
                guard let meta = try remote.metadata(path.string) else { return }
                if meta.kind == .directory {
                    try remote.removeDirectory(path.string)
                } else {
                    try remote.removeFile(path.string)
                }
            }
        }
    }

    /// A folder on this machine answers as long as its root can be looked at; listing it
    /// (the default) would read a whole folder for a yes or no.
    public func checkReachable() async throws(BackendError) {
        let folder = root
        _ = try await BlockingIO.run { () throws(BackendError) in
            try BackendError.catching { () throws in try LocalFileSystem.metadataFollowingLinks(folder) }
        }
    }
}

/// The folders one trip to a blocking thread reads or writes in: the remote's root, opened
/// when first needed, and below it each folder once for a run of files in it
/// (`FolderWalkCache`). Kept for one trip only.
struct TripFolders {
    let backend: LocalBackend
    /// Uploads make missing folders (and a missing root); downloads never do.
    let creating: Bool
    private var folders: FolderWalkCache?

    init(backend: LocalBackend, creating: Bool) {
        self.backend = backend
        self.creating = creating
    }

    mutating func open(_ path: RelativePath) throws(SystemError) -> AnchoredFolder {
        var opened: FolderWalkCache
        if let folders {
            opened = folders
        } else {
            opened = FolderWalkCache(root: try backend.anchor(creating: creating), creating: creating ? 0o755 : nil)
        }
        defer { folders = opened }
        return try opened.folder(path.string)
    }
}

/// Small downloads come from the core in batches (`DirectDownloadBackend`).
extension LocalBackend: DirectDownloadBackend {
    /// Downloads come in path order, so mostly several from one folder: the remote's root
    /// and each source folder are opened once for the files in it.
    public func downloadNow(_ downloads: [(request: DownloadRequest, observer: any TransferObserver)]) -> [Result<DownloadResult, BackendError>] {
        var folders = TripFolders(backend: self, creating: false)
        return downloads.map { download in
            Result { () throws(BackendError) in try fetch(download.request, observer: download.observer, folders: &folders) }
        }
    }
}

/// Encrypted uploads are encrypted straight into the temporary file, with no scratch copy.
extension LocalBackend: ContentUploadBackend {}

extension LocalBackend: StagedUploadBackend {
    public func stageUpload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> StagedUpload? {
        try await write(request, observer: observer, flushing: false) { _, staged in staged }
    }

    public func stageNow(_ request: UploadRequest, observer: any TransferObserver) throws(BackendError) -> StagedUpload? {
        var folders = TripFolders(backend: self, creating: true)
        return try writeNow(request, observer: observer, flushing: false, folders: &folders) { _, staged in staged }
    }

    /// Uploads come in path order, so mostly several into one folder: the remote's root
    /// and each target folder are opened once for the uploads into it, not once per file
    /// (five system calls of a small file's twenty).
    public func stageNow(_ uploads: [(request: UploadRequest, observer: any TransferObserver)]) -> [Result<StagedUpload?, BackendError>] {
        var folders = TripFolders(backend: self, creating: true)
        return uploads.map { upload in
            Result { () throws(BackendError) in
                try writeNow(upload.request, observer: upload.observer, flushing: false, folders: &folders) { _, staged in staged }
            }
        }
    }

    public func publishStaged(_ uploads: [StagedUpload]) async throws(BackendError) -> [Result<UploadResult, BackendError>] {
        let (results, names) = try await publishStaged(uploads, after: nil)
        try await flushNames(names)
        return results
    }

    /// One flush for the batch's bytes (and `earlier`'s names) before any file is named,
    /// then each file named: a `syncfs` per filesystem written to instead of a `fsync` per
    /// file. The names are flushed by the next batch's flush, so a run of batches flushes
    /// once per batch, not twice; each flush holds back every other write to that
    /// filesystem while the journal commits (ext4).
    public func publishStaged(_ uploads: [StagedUpload], after earlier: UnflushedNames?) async throws(BackendError)
        -> (results: [Result<UploadResult, BackendError>], names: UnflushedNames) {
        let earlierFilesystems = try Self.ownNames(earlier)
        return try await BlockingIO.run { () throws(BackendError) -> (results: [Result<UploadResult, BackendError>], names: UnflushedNames) in
            let remote = try BackendError.catching { try anchor() }
            // Uploads come folder by folder: each folder is opened once for its files.
            var folders = FolderWalkCache(root: remote)
            var targets: [Result<AnchoredFolder, BackendError>] = []
            targets.reserveCapacity(uploads.count)
            var filesystems = FilesystemFlushers()
            for staged in uploads {
                let target = Result { () throws(BackendError) -> AnchoredFolder in
                    guard let parent = staged.result.entry.path.parent else {
                        throw BackendError(.invalidName, "cannot upload onto the remote's root folder")
                    }
                    let folder = try BackendError.catching { try folders.folder(parent.string) }
                    try BackendError.catching { try filesystems.note(folder, at: parent.string) }
                    return folder
                }
                targets.append(target)
            }
            var flushing = filesystems
            if let earlierFilesystems { flushing.note(earlierFilesystems) }
            try BackendError.catching { try flushing.flush() }
            let results = zip(uploads, targets).map { staged, target -> Result<UploadResult, BackendError> in
                target.flatMap { folder in
                    Result { () throws(BackendError) in
                        try Self.putInPlace(staged, in: folder)
                        return staged.result
                    }
                }
            }
            return (results, UnflushedNames(filesystems))
        }
    }

    public func flushNames(_ names: UnflushedNames) async throws(BackendError) {
        guard let filesystems = try Self.ownNames(names), filesystems.count > 0 else { return }
        try await BlockingIO.run { () throws(BackendError) in
            try BackendError.catching { try filesystems.flush() }
        }
    }

    /// What a batch published here left to flush. Names another backend left cannot be
    /// flushed from here: taking them for nothing would let the caller book files whose
    /// names may not be on disk, so that is refused before anything is published.
    static func ownNames(_ names: UnflushedNames?) throws(BackendError) -> FilesystemFlushers? {
        guard let pending = names?.pending else { return nil }
        guard let own = pending as? FilesystemFlushers else {
            throw BackendError(.unsupported, "names left by another backend (\(type(of: pending))) cannot be flushed by the local backend")
        }
        return own
    }
}
