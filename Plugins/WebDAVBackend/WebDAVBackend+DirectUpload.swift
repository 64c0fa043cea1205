import CurlTransport
import FerryPluginAPI
import FerrySystem
import Foundation

/// A small file's upload on the core's blocking thread: the same `PUT` (to the temporary
/// name, or to the final one where `putsDirectly` allows), look at the source and `MOVE`
/// as `upload` (WebDAVBackend+Upload.swift), without three more trips between threads. On
/// nginx those trips, not the requests, were most of the CPU a push of small files took.
extension WebDAVBackend: DirectUploadBackend {
    /// Files that go in one plain `PUT`.
    public var directUploadLimit: Int64 { uploadChunkSize > 0 ? uploadChunkSize + 1 : .max }

    /// Declines (nil) until the usual path has done what it awaits: the folder created
    /// (`MKCOL`), the server probed, uploads known to need no `PROPFIND` to confirm them;
    /// and always where each upload needs a `PROPPATCH` for its modification time.
    public func uploadNow(_ request: UploadRequest, observer: any TransferObserver) throws(BackendError) -> UploadResult? {
        guard let parent = request.destination.parent, knownFolders.contains(parent),
              let features = serverFeatureRecord.current, !setsModificationTimeProperty(features),
              !confirmation.needsCheck else { return nil }
        let direct = putsDirectly(request, features: features)
        let target = direct ? request.destination
            : try parent.appending(TemporaryName.for(request.destination.name, tag: request.temporaryTag))
        let put = direct ? directPut(of: request) : plainPut(of: request, to: target, length: request.size)
        let response = try transport.performNow(put, observer: observer)
        if response.status == 409 || response.status == 404 {
            // The folder vanished since it was cached: nothing was stored, and the usual
            // path creates the folder again.
            knownFolders.remove(parent)
            return nil
        }
        if Self.refusedAsTaken(response, put) { throw Self.nameTaken(request.destination, cause: Self.conditionalPutRefusal) }
        guard response.isSuccess else {
            throw HTTPErrorMapping.error(status: response.status, method: "PUT", path: request.destination.description,
                                         retryAfter: response.header("retry-after"))
        }
        guard try Self.sourceIsUnchanged(request) else {
            // Sent directly, the server holds the planned version, whole: the source passed
            // its look at the last bytes (see `uploadDirectly`).
            if !direct && HousekeepingDeletions.allowed {
                _ = try? transport.performNow(HTTPRequest(method: "DELETE", url: urls.url(target, isFolder: false), responseBody: .discard))
            }
            throw Self.sourceChanged(request)
        }
        if !direct {
            let moved = try transport.performNow(moveRequest(from: target, to: request.destination, overwrite: !request.expectsNewFile))
            if request.expectsNewFile, moved.status == 412 {
                if HousekeepingDeletions.allowed {
                    _ = try? transport.performNow(HTTPRequest(method: "DELETE", url: urls.url(target, isFolder: false), responseBody: .discard))
                }
                throw Self.nameTaken(request.destination, cause: "HTTP 412 on MOVE with Overwrite: F")
            }
            try Self.checkMoved(moved, target)
        }
        let entry = UploadConfirmation.prediction(path: request.destination, size: request.size, sentDateNanos: request.modifiedNanos)
        // The source was its planned version after the PUT had read all of it: what the
        // server stored is that version.
        return UploadResult(entry: entry, bytesSent: request.size, resumedFrom: 0, verifiedSource: true)
    }
}
