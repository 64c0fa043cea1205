import FerryPluginAPI

/// A folder that keeps versions (`remote_rights` without `delete`, or retention set) never
/// lets an upload destroy the remote version it replaces: the version is first copied on
/// the server into the versions folder (`VersionName`), then the new one is written over
/// the name. A copy is no deletion on any backend (S3's CopyObject, WebDAV's COPY, a
/// local copy), so nothing in this path sends one. A version another device wrote after
/// this device's listing is what the copy saves: it is kept, not lost.
extension TransferExecutor {
    /// Saves the remote file `planned` is about to replace; nothing when the upload takes a
    /// new name, or when the name turned out empty (the upload then creates it).
    func saveReplacedVersion(_ planned: FileRecord) async throws {
        guard pair.savesVersions, planned.remote != nil else { return }
        let relative = try RemotePath(planned.path)
        let name = try remotePath(planned)
        var millis = Int64((currentTime() * 1000).rounded(.down))
        // A saved name is taken only while it is free: two saves of one file within one
        // millisecond (two devices) get the next millisecond.
        for _ in 0..<1000 {
            let target = try VersionName.savedPath(of: relative, replacedAtMillis: millis, root: pair.remoteRoot)
            guard let refusal = await copyRefusal(from: name, to: target) else {
                await pruneVersions(of: relative)
                return
            }
            switch refusal.code {
            case .alreadyExists: millis += 1
            case .notFound: return
            default: throw refusal
            }
        }
        throw BackendError(.alreadyExists, "no free name in the versions folder", path: planned.path)
    }

    /// The copy's error, if any (a helper: matching a typed error's code in a `catch`
    /// pattern here crashes the compiler).
    func copyRefusal(from source: RemotePath, to target: RemotePath) async -> BackendError? {
        do {
            try await pair.backend.copy(from: source, to: target, overwrite: false)
            return nil
        } catch {
            return error
        }
    }

    /// Retention (`keep_versions`, `keep_days`) over the saved versions of one file, in a
    /// folder that may delete. A failure loses nothing (a version stays a little longer).
    func pruneVersions(of relative: RemotePath) async {
        guard pair.rights.mayDelete, !pair.retention.isEmpty,
              let folder = VersionName.folder(root: pair.remoteRoot).appending(relative).parent,
              let listed = try? await pair.backend.list(folder) else { return }
        let saved = listed.compactMap { entry -> VersionHistory.Saved? in
            guard entry.kind == .file, let parsed = VersionName.parse(entry.path.name), parsed.name == relative.name else { return nil }
            return VersionHistory.Saved(replacedAtMillis: parsed.replacedAtMillis, size: entry.size,
                                        modifiedMillis: entry.modifiedNanos.map { $0 / 1_000_000 }, path: entry.path.string)
        }
        let nowMillis = Int64((currentTime() * 1000).rounded(.down))
        for expired in VersionPruning.expired(saved, retention: pair.retention, nowMillis: nowMillis) {
            guard let path = try? RemotePath(expired.path) else { continue }
            try? await pair.backend.delete(path)
        }
    }
}
