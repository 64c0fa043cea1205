import FerryPluginAPI
import LocalBackend

/// A test backend that hands every operation it does not watch to another backend.
protocol WrapsBackend: Backend {
    associatedtype Inner: Backend
    var inner: Inner { get }
}

/// One that wraps a real LocalBackend.
protocol WrapsLocalBackend: WrapsBackend where Inner == LocalBackend {}

extension WrapsBackend {
    var capabilities: BackendCapabilities { inner.capabilities }
    var displayName: String { inner.displayName }
    func list(_ directory: RemotePath) async throws(BackendError) -> [RemoteEntry] { try await inner.list(directory) }
    func stat(_ path: RemotePath) async throws(BackendError) -> RemoteEntry? { try await inner.stat(path) }
    func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        try await inner.upload(request, observer: observer)
    }
    func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        try await inner.download(request, observer: observer)
    }
    func makeDirectory(_ path: RemotePath) async throws(BackendError) { try await inner.makeDirectory(path) }
    func move(from source: RemotePath, to destination: RemotePath, overwrite: Bool) async throws(BackendError) {
        try await inner.move(from: source, to: destination, overwrite: overwrite)
    }
    func delete(_ path: RemotePath) async throws(BackendError) { try await inner.delete(path) }
}
