/// A backend that fetches a file with blocking calls on the calling thread (a local disk),
/// so the core fetches small files several in one trip to a blocking thread (`BlockingIO`)
/// instead of two trips each. Each trip wakes a blocking thread and then a cooperative one;
/// for a pull of 20,000 small files those wake-ups were a fifth of the pull's CPU.
public protocol DirectDownloadBackend: Backend {
    /// Everything `download` does, for each download in turn, on the calling thread, which
    /// must be a blocking one: one result per download, in order. A backend may share work
    /// between them (a local disk opens a source folder once for the files in it). A
    /// request may come with its partial file open (`DownloadRequest.openPartial`).
    func downloadNow(_ downloads: [(request: DownloadRequest, observer: any TransferObserver)]) -> [Result<DownloadResult, BackendError>]
}
