import FerryPluginAPI
import Foundation

/// The `compareContent` job: look-alike copies (same size and time, not vouched for by a
/// sync) are read and compared byte by byte (`Planner.lookAlikeDecision`).
extension TransferExecutor {
    func compareContent(_ planned: FileRecord, observer: JobObserver) async throws -> Success {
        guard let local = planned.local, let remote = planned.remote else { return .vanished }
        let tooLarge = local.size > compareMaxSize
        if !tooLarge {
            switch try await sameBytes(planned, local: local, remote: remote, observer: observer) {
            case nil: return .vanished
            case true?:
                var record = planned
                record.markInSync(local: local, remote: remote, at: currentTime())
                return .compared(record, equal: true)
            case false?: break
            }
        }
        let reason = tooLarge ? "larger than transfers.compare_max_size, so not compared" : nil
        let decision = Planner.decideDiffering(planned, options: planOptions, reason: reason)
        var record = planned
        switch decision {
        case let .transfer(action), let .delete(action), let .move(action, _):
            record.plan(action)
            record.moveTarget = Planner.moveTarget(for: decision, record: record, options: planOptions)
        case let .conflict(reason):
            record.markConflict(reason: reason)
        case .inSync, .adopt, .localOnly, .forget:
            // Unreachable with both copies present and their bytes different.
            record.markConflict(reason: Planner.contentDiffersNote)
        }
        return .compared(record, equal: false)
    }

    /// Whether the local file holds the bytes of the remote copy: the remote copy is fetched
    /// next to the file under a temporary name (ignored by every scan), compared, and removed.
    /// nil when either copy is gone or no longer the planned version.
    private func sameBytes(_ planned: FileRecord, local: LocalVersion, remote: RemoteVersion,
                           observer: JobObserver) async throws -> Bool? {
        let source = try remotePath(planned)
        let file = localPath(planned)
        let folder = LocalFileSystem.parentPath(file)
        let copy = LocalFileSystem.join(folder, TemporaryName.for(source.name + ".compare"))
        let reserve = freeSpaceReserve
        try await BlockingIO.run { () throws(BackendError) in
            try? LocalFileSystem.removeFile(copy)
            let space = try LocalFileSystem.filesystemSpace(folder)
            if let refusal = reserve.refusal(needed: remote.size, available: space.available, totalBytes: space.total) {
                throw BackendError(.noSpace, "cannot compare the two copies: " + refusal, path: file)
            }
        }
        defer { try? LocalFileSystem.removeFile(copy) }
        let expected = RemoteEntry(path: source, kind: .file, size: remote.size, modifiedNanos: remote.modifiedNanos,
                                   etag: remote.etag)
        do {
            _ = try await pair.backend.download(DownloadRequest(source: source, partialFile: copy, offset: 0, expected: expected),
                                                observer: observer)
        } catch {
            if error.code == .notFound { return nil }
            throw error
        }
        return try await BlockingIO.run { () throws(BackendError) -> Bool? in
            guard let current = try LocalFileSystem.metadata(file), current.kind == .file,
                  current.size == local.size, current.modifiedNanos == local.modifiedNanos else { return nil }
            return try Self.sameBytes(file, copy)
        }
    }

    /// Reads two files side by side in 1 MiB pieces; false at the first difference.
    static func sameBytes(_ left: String, _ right: String) throws(BackendError) -> Bool {
        guard let first = FileHandle(forReadingAtPath: left) else {
            throw BackendError(.notFound, "cannot open the file to compare it", path: left)
        }
        defer { try? first.close() }
        guard let second = FileHandle(forReadingAtPath: right) else {
            throw BackendError(.notFound, "cannot open the remote copy to compare it", path: right)
        }
        defer { try? second.close() }
        do {
            while true {
                let piece = try first.read(upToCount: 1 << 20) ?? Data()
                let other = try second.read(upToCount: 1 << 20) ?? Data()
                if piece != other { return false }
                if piece.isEmpty { return true }
            }
        } catch {
            throw BackendError(.io, "cannot read the file to compare it: \(error.localizedDescription)", path: left)
        }
    }
}
