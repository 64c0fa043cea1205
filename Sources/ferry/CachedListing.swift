import FerryCore
import FerryJournal
import FerryPluginAPI
import Foundation

/// `ferry ls` answered from the journal: what Ferry last saw of a remote, for one that
/// cannot be reached (or with `--cached`). Every folder pair that syncs with the listed
/// place, or with a folder below or above it, adds the files its journal holds on the
/// remote side.
enum CachedListing {
    struct Answer {
        var entries: [RemoteEntry]
        /// When the freshest of those pairs last listed (or synced with) the remote.
        var asOf: Double?
    }

    /// Nil when no pair of the journal that finished a run syncs with that place.
    static func answer(backend: any Backend, root: RelativePath, recursive: Bool,
                       state: StateFolder) async throws(JournalError) -> Answer? {
        guard let journal = try await state.existingJournal() else { return nil }
        var files: [RelativePath: RemoteEntry] = [:]
        var asOf: Double?
        var matched = false
        for pair in try await journal.folderPairs() {
            // A pair that never finished a run knows nothing of the remote worth showing.
            guard let id = pair.id, let seen = pair.lastListedAt ?? pair.lastRunAt,
                  let pairRoot = Self.root(of: pair.remoteLocation, on: backend) else { continue }
            let prefix: String
            if let inside = root.relative(to: pairRoot) {
                prefix = inside.isRoot ? "" : inside.string + "/"
            } else if pairRoot.relative(to: root) != nil {
                prefix = ""
            } else {
                continue
            }
            matched = true
            asOf = max(asOf ?? seen, seen)
            for file in try await journal.knownFiles(pairId: id, prefix: prefix, keep: { _ in true }) {
                guard let size = file.remoteSize, let relative = try? RelativePath(file.path) else { continue }
                let path = pairRoot.appending(relative)
                files[path] = RemoteEntry(path: path, kind: .file, size: size, modifiedNanos: file.remoteModifiedNanos,
                                          etag: file.remoteETag)
            }
        }
        guard matched else { return nil }
        if recursive { return Answer(entries: Array(files.values), asOf: asOf) }
        // One level: the files right in the folder, and a folder for each deeper one.
        var entries: [RelativePath: RemoteEntry] = [:]
        for (path, entry) in files {
            guard let relative = path.relative(to: root), let first = relative.components.first else { continue }
            if relative.components.count == 1 {
                entries[path] = entry
            } else if let folder = try? root.appending(first), entries[folder] == nil {
                entries[folder] = RemoteEntry(path: folder, kind: .directory, size: 0, modifiedNanos: nil, etag: nil)
            }
        }
        return Answer(entries: Array(entries.values), asOf: asOf)
    }

    /// The remote folder a pair's `remoteLocation` names on `backend`, nil when it is
    /// another backend's (`FolderPair.remoteLocation`: the backend's name, `#`, the path).
    static func root(of location: String, on backend: any Backend) -> RelativePath? {
        let name = backend.displayName
        if location == name { return .root }
        guard location.hasPrefix(name + "#") else { return nil }
        return try? RelativePath(String(location.dropFirst(name.count + 1)))
    }
}
