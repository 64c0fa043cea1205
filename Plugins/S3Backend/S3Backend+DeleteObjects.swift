import CurlTransport
import FerryPluginAPI
import Foundation

extension S3Backend {
    /// DeleteObjects, up to 1,000 keys per request: a mirror that removes 10,000 files sends
    /// ten requests, not ten thousand. Keys the store reports under `<Error>` fail on their
    /// own, classified as any S3 error; a key that was already gone is deleted. A store that
    /// does not implement DeleteObjects gets one `DELETE` per key, for the backend's lifetime.
    public func deleteFiles(_ paths: [RelativePath]) async throws(BackendError) -> [RelativePath: BackendError] {
        var failures: [RelativePath: BackendError] = [:]
        var keyed: [(key: String, path: RelativePath)] = []
        for path in paths {
            if path.isRoot {
                failures[path] = BackendError(.invalidName, "the remote's root cannot be deleted", path: path.description)
            } else {
                keyed.append((addressing.key(path), path))
            }
        }
        var start = keyed.startIndex
        while start < keyed.endIndex {
            let chunk = Array(keyed[start..<min(start + DeleteObjectsMessage.maxKeys, keyed.endIndex)])
            start += chunk.count
            let chunkFailures = deleteObjectsRefusal.isRefused
                ? try await deleteOneAtATime(chunk.map(\.path)) { path throws(BackendError) in try await deleteObject(path) }
                : try await deleteObjects(chunk)
            failures.merge(chunkFailures) { first, _ in first }
        }
        return failures
    }

    /// One DeleteObjects request for at most 1,000 keys.
    private func deleteObjects(_ chunk: [(key: String, path: RelativePath)]) async throws(BackendError) -> [RelativePath: BackendError] {
        let method = "POST (DeleteObjects)"
        let body = DeleteObjectsMessage.body(keys: chunk.map(\.key))
        let response = try await send("POST", url: addressing.bucketURL(query: S3Query([("delete", "")])),
                                      headers: [("Content-Type", "application/xml"),
                                                ("Content-MD5", DeleteObjectsMessage.contentMD5(body))],
                                      body: .data(body))
        if response.status == 501 || S3ErrorResponse(body: response.body).code == "NotImplemented" {
            deleteObjectsRefusal.remember()
            return try await deleteOneAtATime(chunk.map(\.path)) { path throws(BackendError) in try await deleteObject(path) }
        }
        guard response.status == 200 else {
            // The request failed as a whole: no key is known to be gone. The error names no
            // single path; the caller gives it each file's.
            var error = S3ErrorResponse.error(status: response.status, body: response.body, method: method, path: "",
                                              retryAfter: response.header("retry-after"), addressing: addressing)
            error.path = nil
            throw error
        }
        let paths = Dictionary(chunk.map { ($0.key, $0.path) }, uniquingKeysWith: { first, _ in first })
        var failures: [RelativePath: BackendError] = [:]
        for failure in try DeleteObjectsMessage.failures(response.body) {
            // A key that is gone already is what a delete wants; a key the request did not
            // name is the store's confusion, not a file's failure.
            guard failure.code != "NoSuchKey", let path = paths[failure.key] else { continue }
            // No status belongs to one key: an unknown code is taken as the store's failure
            // (500), so it is retried within the run's attempts rather than dropped.
            failures[path] = S3ErrorResponse(code: failure.code, message: failure.message)
                .error(status: 500, method: method, path: path.description, retryAfter: nil, addressing: addressing)
        }
        return failures
    }
}
