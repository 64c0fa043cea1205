import FerryPlanning
import FerryPluginAPI

/// A folder that keeps versions (`remote_rights` without `delete`, or retention set) never
/// lets an upload destroy the remote version it replaces, nor the version another device
/// writes at the same moment. No path here sends a deletion.
///
/// - Where the store moves a file in one step (a disk, WebDAV), the version under the name
///   is moved into the versions folder (`VersionName`), and the upload then takes the free
///   name only while it is free. A version another device put there meanwhile is refused,
///   not replaced: the file is decided again (a conflict in a two-way sync, another round
///   of saving in a push). Where that refusal is not made in the same step as the write
///   (WebDAV's `Overwrite: F`), the run holds the folder's write lease, so that no other
///   device writes between the look and the rename.
/// - Elsewhere (S3: a move is a copy and a delete) the version is copied into the versions
///   folder, and the upload replaces the name only while it holds the listed version
///   (`UploadRequest.replacedETag`, `If-Match`). The run also holds the folder's write
///   lease, for stores that ignore the condition.
extension TransferExecutor {
    /// How the remote version an upload replaces was kept.
    enum ReplacedVersionKeeping: Equatable {
        /// Nothing to keep: a new name, or a folder that keeps no versions.
        case none
        /// Moved into the versions folder: the upload takes the name only while it is free.
        case movedAside
        /// Copied into the versions folder: the upload replaces the name only while it
        /// holds the version with this ETag (where the listing gave one).
        case copied(replacedETag: String?)
    }

    /// Keeps the remote file `planned` is about to replace in the versions folder, and says
    /// how, so that the upload is made conditional to match.
    func keepReplacedVersion(_ planned: FileRecord) async throws -> ReplacedVersionKeeping {
        guard pair.savesVersions, let expected = planned.remote else { return .none }
        let capabilities = pair.backend.capabilities
        if capabilities.atomicMove {
            try await moveIntoVersions(planned, expected: expected)
            return .movedAside
        }
        try await saveReplacedVersion(planned)
        return .copied(replacedETag: expected.etag)
    }

    /// Moves the version under `planned`'s name into the versions folder. In a two-way
    /// sync, a version other than the planned one (another device wrote since the
    /// listing) is put back and the file decided again (`RemoteChangedSincePlan`); a push
    /// replaces whatever is there, which stays in the versions folder. An empty name
    /// (another device moved the version into the versions folder a moment ago, or an
    /// earlier attempt of this job did) is fine: the upload takes it only while it is free.
    private func moveIntoVersions(_ planned: FileRecord, expected: RemoteVersion) async throws {
        try await intoVersions(planned, by: { await self.moveRefusal(from: $0, to: $1) }) { name, target in
            guard self.planOptions.mode == .sync else { return }
            guard let moved = try await self.pair.backend.stat(target), moved.kind == .file else {
                throw RemoteChangedSincePlan(current: try await self.pair.backend.stat(name),
                                             message: "the remote file vanished while it was moved into the versions folder")
            }
            if !Self.isDisplaced(moved, expected) {
                try await self.putBack(target, to: name, planned: planned)
                throw RemoteChangedSincePlan(current: moved, message: "another device wrote the remote file since the listing")
            }
        }
    }

    /// Copies the remote file `planned` is about to replace into the versions folder;
    /// nothing when the name turned out empty (the upload then creates it).
    func saveReplacedVersion(_ planned: FileRecord) async throws {
        guard pair.savesVersions, planned.remote != nil else { return }
        try await intoVersions(planned, by: { await self.copyRefusal(from: $0, to: $1) }) { _, _ in }
    }

    /// Puts the version under `planned`'s name into the versions folder with `put` (a move
    /// or a copy that never replaces its target; nil when done, else why not), under a
    /// name stamped with this moment, then runs `saved` on the name and the saved path and
    /// applies retention. A saved name is taken only while it is free: two saves of one
    /// file within one millisecond (two devices) get the next millisecond. Nothing when
    /// the name is empty.
    private func intoVersions(_ planned: FileRecord, by put: (RelativePath, RelativePath) async -> BackendError?,
                              saved: (RelativePath, RelativePath) async throws -> Void) async throws {
        let relative = try RelativePath(planned.path)
        let name = try remotePath(planned)
        var millis = Int64((currentTime() * 1000).rounded(.down))
        for _ in 0..<1000 {
            let target = try VersionName.savedPath(of: relative, replacedAtMillis: millis, root: pair.remoteRoot)
            guard let refusal = await put(name, target) else {
                try await saved(name, target)
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
    func copyRefusal(from source: RelativePath, to target: RelativePath) async -> BackendError? {
        do {
            try await pair.backend.copy(from: source, to: target, overwrite: false)
            return nil
        } catch {
            return error
        }
    }

    /// Retention (`keep_versions`, `keep_days`) over the saved versions of one file, in a
    /// folder that may delete. A failure loses nothing (a version stays a little longer).
    func pruneVersions(of relative: RelativePath) async {
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
            guard let path = try? RelativePath(expired.path) else { continue }
            try? await pair.backend.delete(path)
        }
    }
}
