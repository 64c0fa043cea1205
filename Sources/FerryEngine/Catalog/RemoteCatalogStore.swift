import Crypto
import FerryPluginAPI
import FerrySystem
import Foundation

/// Reads a folder pair's remote catalogs (every writer's, merged) and writes this writer's
/// when what it holds changed (`RemoteCatalog`). What was last written is remembered by its
/// digest in the state folder, so a run that changed nothing sends no request for it.
package struct RemoteCatalogStore: Sendable {
    package let pair: FolderPair
    /// Scratch space in the state folder for the files on their way.
    package let workDirectory: String
    /// `state/catalogs/pair-N.digest`: the SHA-256 of the catalog this writer last wrote.
    package let digestFile: String
    /// This writer's file in the remote's catalog folder.
    package let fileName: String

    package init(pair: FolderPair, stateDirectory: String, pairId: Int64, host: String) {
        self.pair = pair
        workDirectory = PairWorkDirectory.path(in: stateDirectory, pairId: pairId)
        digestFile = LocalFileSystem.join(LocalFileSystem.join(stateDirectory, "catalogs"), "pair-\(pairId).digest")
        fileName = RemoteCatalog.fileName(host: host, localRoot: pair.localRoot)
    }

    package var folder: RelativePath { RemoteCatalog.folder(in: pair.remoteRoot) }

    /// Every writer's catalog, merged (the newest time wins for a path two writers list);
    /// nil when the remote holds none. A file that is not a catalog is skipped.
    package func load() async throws(BackendError) -> RemoteCatalog? {
        try await load(listed: try await listFolder())
    }

    /// The catalog folder's files; nil when there is no such folder.
    package func listFolder() async throws(BackendError) -> [RemoteEntry]? {
        do {
            return try await pair.backend.list(folder)
        } catch where error.code == .notFound {
            return nil
        }
    }

    /// The catalogs among `files` (the catalog folder's listing), merged. A catalog over
    /// the size limit, or catalogs over the path limit together, are an error that names
    /// the file: reading on would cost memory without bound, and leaving them out would
    /// leave hidden files out of a run that exits 0.
    package func load(listed files: [RemoteEntry]?) async throws(BackendError) -> RemoteCatalog? {
        guard let files else { return nil }
        var merged: [String: RemoteCatalog.Entry] = [:]
        var times: [String: KeptFileTime] = [:]
        var found = false
        for file in files where file.kind == .file && file.path.name.hasSuffix(".json") {
            guard file.size <= RemoteCatalog.maxSize else {
                throw Self.tooLarge(file.path.name, "is \(file.size >> 20) MiB, over the \(RemoteCatalog.maxSize >> 20) MiB a catalog may be")
            }
            guard let catalog = try await fetch(file) else { continue }
            found = true
            for entry in catalog.entries {
                if let known = merged[entry.path], (known.modifiedNanos ?? .min) >= (entry.modifiedNanos ?? .min) { continue }
                merged[entry.path] = entry
            }
            guard merged.count <= RemoteCatalog.maxEntries else {
                throw Self.tooLarge(file.path.name, "brings the catalogs to over \(RemoteCatalog.maxEntries) hidden paths")
            }
            // Two writers' times of one path: the newer (each still applies only to its version).
            for time in catalog.times ?? [] where (times[time.path]?.modifiedNanos ?? .min) < time.modifiedNanos {
                times[time.path] = time
            }
            guard times.count <= RemoteCatalog.maxEntries else {
                throw Self.tooLarge(file.path.name, "brings the catalogs to over \(RemoteCatalog.maxEntries) kept times")
            }
        }
        return found ? RemoteCatalog(entries: Array(merged.values), times: times.isEmpty ? nil : Array(times.values)) : nil
    }

    package static func tooLarge(_ name: String, _ what: String) -> BackendError {
        BackendError(.protocolViolation, "\(RemoteCatalog.folderName)/\(name) \(what); remove it there if no device of "
            + "yours writes it (its name is the writer's host), or pass --ignore-hidden-names to run without the catalogs")
    }

    private func fetch(_ file: RemoteEntry) async throws(BackendError) -> RemoteCatalog? {
        try await fetchData(file).flatMap(RemoteCatalog.decode)
    }

    /// A small file of the catalog folder, whole; nil when it has gone meanwhile.
    package func fetchData(_ file: RemoteEntry) async throws(BackendError) -> Data? {
        let scratch = LocalFileSystem.join(workDirectory, TemporaryName.for("catalog-" + file.path.name))
        defer { try? LocalFileSystem.removeFile(scratch) }
        let directory = workDirectory
        try await BlockingIO.run { () throws(BackendError) in
            try BackendError.catching {
                try LocalFileSystem.makeDirectories(directory, permissions: 0o700)
                _ = try OpenFile(scratch, mode: .writeTruncate, permissions: 0o600)
            }
        }
        do {
            _ = try await pair.backend.download(DownloadRequest(source: file.path, partialFile: scratch, offset: 0, expected: file, flush: false),
                                                observer: NullTransferObserver())
        } catch where error.code == .notFound {
            return nil
        }
        return try await BlockingIO.run { () throws(BackendError) -> Data in
            try BackendError.catching { Data(try OpenFile(scratch, mode: .read).readAll()) }
        }
    }

    /// Writes this writer's catalog of `entries` (and `times`, for a store that keeps none)
    /// unless the same catalog was written last.
    package func save(_ entries: [RemoteCatalog.Entry], times: [KeptFileTime]? = nil, now: Double) async throws(BackendError) {
        let data = RemoteCatalog(entries: entries, times: times).encoded()
        let digest = SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
        let digestFile = self.digestFile
        let known = try? await BlockingIO.run { () throws(BackendError) -> String in
            try BackendError.catching { String(decoding: try OpenFile(digestFile, mode: .read).readAll(), as: UTF8.self) }
        }
        if known == digest { return }
        try await put(data, named: fileName, now: now)
        try await BlockingIO.run { () throws(BackendError) in
            try BackendError.catching {
                try LocalFileSystem.makeDirectories(LocalFileSystem.parentPath(digestFile), permissions: 0o700)
                let bytes = Array(digest.utf8)
                try OpenFile(digestFile, mode: .writeTruncate, permissions: 0o600).write(bytes, count: bytes.count, at: 0)
            }
        }
    }

    /// Writes `data` as the catalog folder's file `name` (made if missing), replacing it.
    package func put(_ data: Data, named name: String, now: Double) async throws(BackendError) {
        let scratch = LocalFileSystem.join(workDirectory, TemporaryName.for(name + "-out"))
        let directory = workDirectory
        let mtime = Int64(now * 1e9)
        try await BlockingIO.run { () throws(BackendError) in
            try BackendError.catching {
                try LocalFileSystem.makeDirectories(directory, permissions: 0o700)
                let file = try OpenFile(scratch, mode: .writeTruncate, permissions: 0o600)
                let bytes = [UInt8](data)
                try file.write(bytes, count: bytes.count, at: 0)
                try file.setModificationTime(nanos: mtime)
            }
        }
        defer { try? LocalFileSystem.removeFile(scratch) }
        guard let destination = try? folder.appending(name) else { return }
        try await pair.backend.makeDirectory(folder)
        _ = try await pair.backend.upload(
            UploadRequest(source: scratch, destination: destination, size: Int64(data.count),
                          modifiedNanos: mtime, mayResume: false),
            observer: NullTransferObserver())
    }
}

extension RemoteCatalogStore {
    /// Removes the catalog folder's file `name`; one already gone is fine.
    /// A folder without `delete` leaves it (an old change marker only costs a reader a name
    /// to skip).
    package func remove(named name: String) async throws(BackendError) {
        guard pair.rights.mayDelete else { return }
        guard let path = try? folder.appending(name) else { return }
        do {
            try await pair.backend.delete(path)
        } catch where error.code == .notFound {
            return
        }
    }

    /// Empties the catalog folder's file `name` for those who read it by size: removed
    /// where the folder may delete, else written again with no bytes (write leases:
    /// `WriteLease.listed` skips an empty file).
    func vacate(named name: String, now: Double) async throws(BackendError) {
        if pair.rights.mayDelete {
            try await remove(named: name)
        } else {
            try await put(Data(), named: name, now: now)
        }
    }
}
