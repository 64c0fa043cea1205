import FerryPlanning
import FerryPluginAPI
import FerrySystem

/// The jobs only a two-way sync plans: moves into the trash, renames detected locally and
/// done with one MOVE, and the renames that keep both versions of a conflict.
extension TransferExecutor {
    /// A file renamed locally: the remote copy is renamed to match, and the new path's row
    /// records both sides in sync. The MOVE takes whatever the old name holds: a version
    /// another device wrote there since the listing is put back (`RemoteChangedSincePlan`),
    /// so the old name is decided again (changed there, deleted here: a download) and the
    /// new name waits as a new local file for the next sync's upload. Recorded as moved, the
    /// other device's version would sit under this device's new name with this device's
    /// content recorded as its copy: never downloaded here, and this device's version
    /// never uploaded.
    func moveRemote(_ planned: FileRecord) async throws -> Success {
        guard let target = planned.moveTarget else { return .vanished }
        guard let entry = try await renameOnRemote(planned, to: target, missing: "the renamed file is not on the remote")
        else { return .vanished }
        if let expected = planned.remote, !Self.isDisplaced(entry, expected) {
            let name = try remotePath(planned)
            try await putBack(pair.remoteRoot.appending(try RelativePath(target)), to: name, planned: planned)
            throw RemoteChangedSincePlan(current: try await pair.backend.stat(name),
                                         message: "another device wrote the remote file since the listing")
        }
        guard var moved = try await journal.record(pairId: planned.pairId, path: target), let local = moved.local else {
            return .vanished
        }
        moved.markInSync(local: local, remote: RemoteVersion(entry),
                         at: currentTime())
        return .moved(saved: [moved], removed: [planned.path], next: [])
    }

    /// A conflict the remote version wins: the local version is renamed to the conflict
    /// copy's name, which is then uploaded; the remote version is downloaded under the name.
    func keepBothLocalLoses(_ planned: FileRecord) async throws -> Success {
        guard let target = planned.moveTarget, let expected = planned.local else { return .vanished }
        let source = planned.path
        let folder = local.root
        let renamed = try await BlockingIO.run { () throws(BackendError) -> FileMetadata? in
            try BackendError.catching { () throws -> FileMetadata? in
                guard let current = try folder.metadata(source) else {
                    // A lost result: the rename may have been done already.
                    return try folder.metadata(target)
                }
                guard current.size == expected.size && current.modifiedNanos == expected.modifiedNanos else {
                    throw BackendError(.changedDuringTransfer, "the local file changed since the plan; it will be looked at again",
                                       path: folder.fullPath(source), retryable: false)
                }
                do {
                    // Never over another file: the rename itself refuses a taken name.
                    try folder.rename(source, to: target, replacing: false)
                } catch let error as SystemError where error.isAlreadyExists {
                    throw BackendError(.alreadyExists, "the conflict copy's name is taken", path: folder.fullPath(target))
                }
                return current
            }
        }
        guard let renamed else { return .vanished }
        let now = currentTime()
        var winner = planned
        winner.local = nil
        winner.startOver(waitingFor: .download, at: now)
        var loser = FileRecord(pairId: planned.pairId, path: target, queue: planned.queue, status: .needsUpload, updatedAt: now)
        loser.plan(.upload)
        loser.local = LocalVersion(size: renamed.size, modifiedNanos: renamed.modifiedNanos, inode: Int64(bitPattern: renamed.inode))
        // A pull sends nothing: the kept copy stays on this device.
        if planOptions.mode == .pull {
            loser.keepLocalOnly()
            return .moved(saved: [winner, loser], removed: [], next: [winner])
        }
        return .moved(saved: [winner, loser], removed: [], next: [winner, loser])
    }

    /// A conflict the local version wins: the remote version is renamed on the remote to
    /// the conflict copy's name, which is then downloaded; the local version is uploaded.
    func keepBothRemoteLoses(_ planned: FileRecord) async throws -> Success {
        guard let target = planned.moveTarget else { return .vanished }
        guard let entry = try await renameOnRemote(planned, to: target, missing: "the conflict copy is not on the remote")
        else { return .vanished }
        let now = currentTime()
        var winner = planned
        winner.remote = nil
        winner.startOver(waitingFor: .upload, at: now)
        var loser = FileRecord(pairId: planned.pairId, path: target, queue: planned.queue, status: .needsDownload, updatedAt: now)
        loser.plan(.download)
        loser.remote = RemoteVersion(entry)
        return .moved(saved: [winner, loser], removed: [], next: [winner, loser])
    }

    /// Renames a planned file on the remote to `target` (a path below the pair's root) and
    /// returns what is there now; nil when neither name has the file (it vanished).
    /// Nothing to move may be a lost answer: the MOVE may have been done already.
    private func renameOnRemote(_ planned: FileRecord, to target: String, missing: String) async throws -> RemoteEntry? {
        let source = try remotePath(planned)
        let destination = pair.remoteRoot.appending(try RelativePath(target))
        var moved = true
        if let refusal = await moveRefusal(from: source, to: destination) {
            switch refusal.code {
            case .notFound:
                moved = false
            case .alreadyExists:
                // An earlier attempt's MOVE went through and its answer was lost: the new
                // name holds the planned version. Moving again would take whatever another
                // device has put under the old name since.
                guard let expected = planned.remote, let there = try await pair.backend.stat(destination),
                      there.kind == .file, Self.isDisplaced(there, expected) else { throw refusal }
                return there
            default:
                throw refusal
            }
        }
        let found = try await pair.backend.stat(destination)
        if !moved && found == nil { return nil }
        guard let entry = found, entry.kind == .file else {
            throw BackendError(.notFound, missing, path: destination.description, retryable: true)
        }
        return entry
    }
}
