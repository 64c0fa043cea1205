import FerryPlanning
import FerryPluginAPI
import FerrySystem
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
        // A compare that follows a decision again (an upload that met a copy of its size)
        // names its conflict copies as that decision would have.
        let options = redecisionOptions(tries: Self.redecisions(of: planned))
        let decision = Planner.decideDiffering(planned, options: options, reason: reason)
        var record = planned
        switch decision {
        case .transfer, .delete, .move, .conflict:
            record = Planner.applying(decision, to: planned, options: options, now: planned.updatedAt)
        case .inSync, .adopt, .localOnly, .remoteOnly, .forget:
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
        let relative = planned.path
        let copy = LocalFolder.temporary(beside: relative, suffix: ".compare")
        let folder = self.local.root
        let reserve = freeSpaceReserve
        try await BlockingIO.run { () throws(BackendError) in
            try BackendError.catching {
                try folder.removeFile(copy)
                let space = try folder.filesystemSpace()
                if let refusal = reserve.refusal(needed: remote.size, available: space.available, totalBytes: space.total) {
                    throw BackendError(.noSpace, "cannot compare the two copies: " + refusal, path: folder.fullPath(relative))
                }
                _ = try folder.open(copy, .createNew)
            }
        }
        defer { try? folder.removeFile(copy) }
        let expected = RemoteEntry(path: source, kind: .file, size: remote.size, modifiedNanos: remote.modifiedNanos,
                                   etag: remote.etag)
        do {
            _ = try await pair.backend.download(
                DownloadRequest(source: source, partialFile: folder.fullPath(copy), offset: 0, expected: expected,
                                flush: false),
                observer: observer)
        } catch {
            // Only a remote copy that is gone makes the comparison moot; "not found" may be
            // the local temporary file, whose folder was swapped away meanwhile.
            if error.code == .notFound, try await pair.backend.stat(source) == nil { return nil }
            throw error
        }
        return try await BlockingIO.run { () throws(BackendError) -> Bool? in
            try BackendError.catching { () throws -> Bool? in
                guard let current = try folder.metadata(relative), current.kind == .file,
                      current.size == local.size, current.modifiedNanos == local.modifiedNanos else { return nil }
                return try Self.sameBytes(try folder.open(relative, .read), try folder.open(copy, .read))
            }
        }
    }

    /// Reads two open files side by side in 1 MiB pieces; false at the first difference.
    static func sameBytes(_ left: OpenFile, _ right: OpenFile) throws(SystemError) -> Bool {
        var first = [UInt8](repeating: 0, count: 1 << 20)
        var second = [UInt8](repeating: 0, count: 1 << 20)
        var offset: Int64 = 0
        while true {
            let got = try left.read(into: &first, at: offset)
            let other = try right.read(into: &second, at: offset)
            if got != other || first[0..<got] != second[0..<other] { return false }
            if got == 0 { return true }
            offset += Int64(got)
        }
    }
}
