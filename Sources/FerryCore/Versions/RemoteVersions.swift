import FerryConfig
import FerryEngine
import FerryPluginAPI
import FerrySystem

/// The versions a folder pair's remote holds (`VersionName`, `VersionHistory`), read from
/// listings, and the restore of the state as of a moment (`ferry pull --version TIME`).
public struct RemoteVersions: Sendable {
    public let pair: FolderPair

    public init(pair: FolderPair) {
        self.pair = pair
    }

    var versionsFolder: RelativePath { VersionName.folder(root: pair.remoteRoot) }

    /// One file's versions, oldest first. `relative`: its path in the folder.
    public func history(of relative: RelativePath) async throws(BackendError) -> VersionHistory {
        var saved: [VersionHistory.Saved] = []
        if let folder = versionsFolder.appending(relative).parent {
            for entry in try await listIfPresent(folder) where entry.kind == .file {
                guard let parsed = VersionName.parse(entry.path.name), parsed.name == relative.name else { continue }
                saved.append(Self.saved(entry, replacedAt: parsed.replacedAtMillis))
            }
        }
        let current = try await pair.backend.stat(pair.remoteRoot.appending(relative))
        return VersionHistory(saved: saved, current: current.flatMap { $0.kind == .file ? ($0.size, Self.millis($0.modifiedNanos)) : nil })
    }

    /// Every file's versions, by path in the folder: the current files as listed (Ferry's
    /// own folders left out) and the versions folder's files.
    public func histories(bounds: ListingBounds) async throws(BackendError) -> [String: VersionHistory] {
        var saved: [String: [VersionHistory.Saved]] = [:]
        let versionsListing = try await listTreeIfPresent(versionsFolder, bounds: bounds)
        for entry in versionsListing where entry.kind == .file {
            guard let inFolder = entry.path.relative(to: versionsFolder), let parsed = VersionName.parse(entry.path.name),
                  let parent = inFolder.parent else { continue }
            let path = parent.isRoot ? parsed.name : parent.string + "/" + parsed.name
            saved[path, default: []].append(Self.saved(entry, replacedAt: parsed.replacedAtMillis))
        }
        var current: [String: RemoteEntry] = [:]
        let ownFolders: Set<String> = [VersionName.folderName, TrashSettings.folderName, RemoteCatalog.folderName, BundleNaming.folderName]
        for entry in try await pair.backend.listTree(pair.remoteRoot, bounds: bounds) where entry.kind == .file {
            guard let relative = entry.path.relative(to: pair.remoteRoot), let first = relative.components.first,
                  !ownFolders.contains(first), !TemporaryName.isTemporary(relative.name) else { continue }
            current[relative.string] = entry
        }
        var histories: [String: VersionHistory] = [:]
        for path in Set(saved.keys).union(current.keys) {
            histories[path] = VersionHistory(saved: saved[path] ?? [],
                                             current: current[path].map { ($0.size, Self.millis($0.modifiedNanos)) })
        }
        return histories
    }

    /// What `restore` does: the files put back, and those left as they are because they did
    /// not exist yet at the moment.
    public struct Restored: Sendable {
        public var files: [(path: String, version: VersionHistory.Version)] = []
        public var absentThen: [String] = []
    }

    /// Puts every file's version that was current at `millis` into the local folder, each
    /// written beside its name and renamed into place (a file that did not exist yet then
    /// is left alone; nothing is deleted). The journal is not told: the folder's next push
    /// or sync takes the restored files for local changes and sends them as new versions.
    public func restore(at millis: Int64, bounds: ListingBounds,
                        restored onFile: @Sendable (String, VersionHistory.Version) -> Void = { _, _ in })
        async throws(BackendError) -> Restored {
        var result = Restored()
        let histories = try await histories(bounds: bounds)
        let root = try BackendError.catching { try AnchoredFolder(pair.localRoot, create: true) }
        for path in histories.keys.sorted() {
            guard let history = histories[path], let version = history.version(at: millis) else {
                result.absentThen.append(path)
                continue
            }
            try await fetch(version, of: path, into: root)
            result.files.append((path, version))
            onFile(path, version)
        }
        return result
    }

    private func fetch(_ version: VersionHistory.Version, of path: String, into root: AnchoredFolder) async throws(BackendError) {
        let relative = try RelativePath(path)
        let source = try version.savedPath.map { saved throws(BackendError) in try RelativePath(saved) } ?? pair.remoteRoot.appending(relative)
        guard let entry = try await pair.backend.stat(source), entry.kind == .file else {
            throw BackendError(.notFound, "the version is gone from the remote", path: source.string)
        }
        let temporary = LocalFolder.temporary(beside: path)
        let parent = LocalFolder.parent(path)
        let partial: String = try BackendError.catching {
            if !parent.isEmpty { try root.makeDirectories(parent) }
            // A temporary name of Ferry's own: one left by an interrupted restore goes.
            try? root.removeFile(temporary)
            _ = try root.open(temporary, .createNew)
            return root.fullPath(temporary)
        }
        do {
            _ = try await pair.backend.download(DownloadRequest(source: source, partialFile: partial, offset: 0, expected: entry),
                                                observer: NullTransferObserver())
            try BackendError.catching {
                if let nanos = entry.modifiedNanos { try root.setModificationTime(temporary, nanos: nanos) }
                try root.rename(temporary, to: path)
            }
        } catch {
            try? root.removeFile(temporary)
            throw error
        }
    }

    private func listIfPresent(_ folder: RelativePath) async throws(BackendError) -> [RemoteEntry] {
        do {
            return try await pair.backend.list(folder)
        } catch {
            if error.code == .notFound { return [] }
            throw error
        }
    }

    private func listTreeIfPresent(_ folder: RelativePath, bounds: ListingBounds) async throws(BackendError) -> [RemoteEntry] {
        do {
            return try await pair.backend.listTree(folder, bounds: bounds)
        } catch {
            if error.code == .notFound { return [] }
            throw error
        }
    }

    static func saved(_ entry: RemoteEntry, replacedAt: Int64) -> VersionHistory.Saved {
        VersionHistory.Saved(replacedAtMillis: replacedAt, size: entry.size, modifiedMillis: millis(entry.modifiedNanos),
                             path: entry.path.string)
    }

    static func millis(_ nanos: Int64?) -> Int64? {
        nanos.map { $0 >= 0 ? $0 / 1_000_000 : ($0 - 999_999) / 1_000_000 }
    }
}
