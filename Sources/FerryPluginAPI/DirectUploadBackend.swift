/// A backend that sends a small file with blocking calls on the calling thread, so the
/// core looks at the file and sends it in one trip to a blocking thread (`BlockingIO`)
/// instead of two. Each trip wakes a blocking thread and then a cooperative one; for
/// 2,000 photos of 4 KiB sent to S3 those wake-ups were a quarter of the push's CPU, on a
/// machine whose other core was serving the store.
///
/// A wrapping backend (encryption) conforms and sends directly when what it wraps does.
public protocol DirectUploadBackend: Backend {
    /// Files smaller than this go through `uploadNow` when the core has them.
    var directUploadLimit: Int64 { get }

    /// Everything `upload` does for a file under `directUploadLimit`, on the calling
    /// thread, which must be a blocking one; or nil, having sent nothing, when this upload
    /// needs what only `upload` can do first (a WebDAV folder not yet created, a server not
    /// yet probed), and the caller then sends it with `upload`.
    func uploadNow(_ request: UploadRequest, observer: any TransferObserver) throws(BackendError) -> UploadResult?
}
