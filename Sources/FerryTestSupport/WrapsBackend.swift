import FerryPluginAPI
import Foundation

/// A test backend that hands every required operation it does not watch (and ranged reads) to another
/// backend; the optional ones keep the protocol's defaults.
public protocol WrapsBackend: Backend {
    associatedtype Inner: Backend
    var inner: Inner { get }
}

extension WrapsBackend {
    public var capabilities: BackendCapabilities { inner.capabilities }
    public var displayName: String { inner.displayName }
    public func list(_ directory: RelativePath) async throws(BackendError) -> [RemoteEntry] { try await inner.list(directory) }
    public func stat(_ path: RelativePath) async throws(BackendError) -> RemoteEntry? { try await inner.stat(path) }
    public func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        try await inner.upload(request, observer: observer)
    }
    public func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        try await inner.download(request, observer: observer)
    }
    public func read(_ path: RelativePath, range: Range<Int64>, expected: RemoteEntry,
                     observer: any TransferObserver) async throws(BackendError) -> Data {
        try await inner.read(path, range: range, expected: expected, observer: observer)
    }
    public func makeDirectory(_ path: RelativePath) async throws(BackendError) { try await inner.makeDirectory(path) }
    public func move(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        try await inner.move(from: source, to: destination, overwrite: overwrite)
    }
    public func delete(_ path: RelativePath) async throws(BackendError) { try await inner.delete(path) }
}
