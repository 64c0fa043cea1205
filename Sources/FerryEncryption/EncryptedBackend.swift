import FerryPluginAPI
import FerrySystem
import Foundation
import Logging
import Synchronization

/// Any backend with its contents (and, unless `names: plain`, its path components)
/// encrypted on the way out and checked on the way in (docs/encryption.md). The backend
/// underneath sees only encrypted files and names; the core sees only plaintext.
///
/// - Sizes: a listing's stored sizes become plaintext sizes by arithmetic
///   (`ContentFormat.plaintextSize`), so listings and no-op runs read no file.
/// - Modification times: the stored file carries the plaintext's (as a plain upload does),
///   so a pull into a fresh state gets them back where the backend keeps them.
/// - Uploads are encrypted as the backend underneath reads them, or into a scratch file
///   for a backend that reads only files; a large one interrupted is continued with its
///   header, where the backend continues its own (EncryptedBackend+Upload.swift). Downloads are read a window of segments at a time where the
///   backend reads ranges, else fetched whole into a scratch file; either way every
///   segment is checked before its bytes are written (EncryptedBackend+Download.swift).
/// - A stored name that does not decrypt (a file Ferry did not put there) is left out of
///   listings with a warning.
public final class EncryptedBackend: Backend {
    public let inner: any Backend
    public let settings: EncryptionSettings
    let remoteName: String
    let scratch: ScratchFolder
    let unlock: KeyUnlock
    /// The keys once an upload has unlocked them (and the remote's header is written):
    /// what a direct upload, on a blocking thread, uses without waiting for `unlock`.
    let writingKeys = Mutex<EncryptionKeys?>(nil)
    /// The folder last named and its stored path (`stored`): a folder's files are sent one
    /// after another, and each file's upload and publication encrypted every component of
    /// the folder's path again. One entry, so memory stays flat on any tree.
    private let lastFolder = Mutex<(plain: RelativePath, stored: RelativePath)?>(nil)
    let logger = Logger(label: "ferry.encryption")

    public init(wrapping inner: any Backend, settings: EncryptionSettings, remoteName: String,
                environment: [String: String] = ProcessInfo.processInfo.environment) throws(BackendError) {
        self.inner = inner
        self.settings = settings
        self.remoteName = remoteName
        scratch = try ScratchFolder()
        unlock = KeyUnlock(inner: inner, settings: settings, remoteName: remoteName, scratch: scratch, environment: environment)
    }

    public var displayName: String { inner.displayName + " (encrypted)" }

    public var capabilities: BackendCapabilities { adjusted(inner.capabilities) }

    public func discoverCapabilities() async throws(BackendError) -> BackendCapabilities {
        adjusted(try await inner.discoverCapabilities())
    }

    private func adjusted(_ capabilities: BackendCapabilities) -> BackendCapabilities {
        var result = capabilities
        // An upload continues where the backend's own would (with the earlier attempt's
        // header); a download continues at a segment where the backend reads ranges.
        result.rangedDownload = capabilities.rangedRead
        // Ranged reads are of stored bytes, which the core never sees.
        result.rangedRead = false
        // Encrypted names are base32: none starts with `.`, so none is hidden.
        if settings.names == .encrypted { result.listingOmitsHiddenNames = false }
        return result
    }

    public func checkReachable() async throws(BackendError) {
        try await inner.checkReachable()
    }

    // MARK: Names

    private func names(_ keys: EncryptionKeys) -> NameCipher? {
        settings.names == .encrypted ? NameCipher(keys: keys) : nil
    }

    func stored(_ path: RelativePath, _ keys: EncryptionKeys) throws(BackendError) -> RelativePath {
        guard let cipher = names(keys) else {
            if path.components.first == RemoteKeyHeader.objectName {
                throw BackendError(.invalidName, "\(RemoteKeyHeader.objectName) is the encrypted remote's own header", path: path.string)
            }
            return path
        }
        guard let parent = path.parent, !parent.isRoot else {
            return try RelativePath(components: path.components.map { component throws(BackendError) in try cipher.encrypt(component) })
        }
        let storedParent: RelativePath
        if let last = lastFolder.withLock({ $0 }), last.plain == parent {
            storedParent = last.stored
        } else {
            storedParent = try stored(parent, keys)
            lastFolder.withLock { $0 = (parent, storedParent) }
        }
        return try storedParent.appending(try cipher.encrypt(path.name))
    }

    /// The plaintext entry of a stored one, or nil (with a warning) for one that is not Ferry's.
    private func plaintext(_ entry: RemoteEntry, in directory: RelativePath, _ keys: EncryptionKeys) -> RemoteEntry? {
        let storedName = entry.path.name
        if directory.isRoot && storedName == RemoteKeyHeader.objectName { return nil }
        if TemporaryName.isTemporary(storedName) { return nil }
        var result = entry
        if let cipher = names(keys) {
            guard let name = cipher.decrypt(storedName), let path = try? directory.appending(name) else {
                logger.warning("skipping \(entry.path.string) on \(inner.displayName): its name does not decrypt with this key (not a file Ferry encrypted)")
                return nil
            }
            result.path = path
        } else {
            guard let path = try? directory.appending(storedName) else { return nil }
            result.path = path
        }
        if entry.kind == .file {
            guard let size = ContentFormat.plaintextSize(ciphertextSize: entry.size) else {
                logger.warning("skipping \(result.path.string) on \(inner.displayName): its size (\(entry.size) bytes) is no encrypted file's")
                return nil
            }
            result.size = size
        }
        return result
    }

    // MARK: Operations

    public func list(_ directory: RelativePath) async throws(BackendError) -> [RemoteEntry] {
        let keys = try await unlock.keys()
        let entries = try await inner.list(try stored(directory, keys))
        return entries.compactMap { plaintext($0, in: directory, keys) }
    }

    public func stat(_ path: RelativePath) async throws(BackendError) -> RemoteEntry? {
        let keys = try await unlock.keys()
        guard let parent = path.parent else { return try await inner.stat(.root) }
        guard let entry = try await inner.stat(try stored(path, keys)) else { return nil }
        guard var result = plaintext(entry, in: parent, keys) else {
            throw EncryptionFailure.authentication("the stored file's size is no encrypted file's", path: path.string)
        }
        result.path = path
        return result
    }

    /// The uploads the journal means to continue are kept under their stored names; the
    /// paths reported are the stored ones.
    public func abortAbandonedUploads(below folder: RelativePath, keeping: Set<RelativePath>,
                                      olderThanSeconds: Int64?) async throws(BackendError) -> [AbandonedUpload] {
        let keys = try await unlock.keys()
        let storedKeeping = Set(keeping.compactMap { try? stored($0, keys) })
        return try await inner.abortAbandonedUploads(below: try stored(folder, keys), keeping: storedKeeping,
                                                     olderThanSeconds: olderThanSeconds)
    }

    public func makeDirectory(_ path: RelativePath) async throws(BackendError) {
        let keys = try await unlock.keys(writing: true)
        try await inner.makeDirectory(try stored(path, keys))
    }

    public func delete(_ path: RelativePath) async throws(BackendError) {
        let keys = try await unlock.keys()
        try await inner.delete(try stored(path, keys))
    }

    /// The inner backend's batches, with names encrypted; a name that cannot be encrypted
    /// fails alone.
    public func deleteFiles(_ paths: [RelativePath]) async throws(BackendError) -> [RelativePath: BackendError] {
        let keys = try await unlock.keys()
        var failures: [RelativePath: BackendError] = [:]
        var storedPaths: [RelativePath] = []
        var plaintextPaths: [RelativePath: RelativePath] = [:]
        for path in paths {
            do {
                let storedPath = try stored(path, keys)
                storedPaths.append(storedPath)
                plaintextPaths[storedPath] = path
            } catch {
                failures[path] = error
            }
        }
        for (storedPath, error) in try await inner.deleteFiles(storedPaths) {
            if let path = plaintextPaths[storedPath] { failures[path] = error }
        }
        return failures
    }
}
