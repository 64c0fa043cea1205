import FerryPluginAPI
import FerrySystem
import Foundation

/// Multipart uploads left unfinished (a crash, a file that went away, a version that
/// changed before the next run) keep their parts on the store, taking space, until they
/// are completed or aborted. An upload the journal means to continue is never aborted: the
/// next run resumes it whatever its age.
extension S3Backend {
    public func abortAbandonedUploads(below folder: RelativePath, keeping: Set<RelativePath>,
                                      olderThanSeconds: Int64?) async throws(BackendError) -> [AbandonedUpload] {
        guard let age = olderThanSeconds ?? multipart.abandonAfterSeconds else { return [] }
        return try await abortAbandonedUploads(below: folder, keeping: keeping, olderThanSeconds: age,
                                               now: Int64(SystemClock().wallTime()))
    }

    /// The same at a given `now` (seconds since 1970), for tests: a store's clock cannot be
    /// moved forward, so an upload's age is tested by moving `now`.
    func abortAbandonedUploads(below folder: RelativePath, keeping: Set<RelativePath>, olderThanSeconds age: Int64,
                               now: Int64) async throws(BackendError) -> [AbandonedUpload] {
        var aborted: [AbandonedUpload] = []
        for upload in try await uploadsInProgress(prefix: addressing.folderPrefix(folder), path: folder) {
            // A key that is no path below the root ("a//b") is not Ferry's; an upload of
            // unknown age may have started a moment ago.
            guard upload.key.hasPrefix(addressing.prefix), let path = try? RelativePath(String(upload.key.dropFirst(addressing.prefix.count))),
                  !keeping.contains(path), let initiated = upload.initiatedNanos,
                  initiated / 1_000_000_000 <= now - age else { continue }
            try await abort(key: upload.key, uploadID: upload.uploadID, path: path)
            aborted.append(AbandonedUpload(path: path, startedNanos: initiated))
        }
        return aborted
    }
}
