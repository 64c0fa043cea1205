import FerryPluginAPI
import Logging
import Synchronization

/// Performs HTTP requests with libcurl for one server. Blocking `curl_easy_perform` runs
/// on `BlockingIO`'s threads, never on the cooperative pool; easy handles are pooled so
/// each keeps its keep-alive connections for the next request.
public final class CurlTransport: Sendable {
    public let settings: CurlTransportSettings
    private let idle = Mutex<[PooledHandle]>([])
    private let software = Mutex<String?>(nil)

    /// The `Server` header of the first answer that had one: what the server says it runs,
    /// for a backend to check a remembered probe against (`BackendMemory`).
    public var serverSoftware: String? { software.withLock { $0 } }

    /// `server` names the remote in the warning that insecure mode always gives.
    public init(settings: CurlTransportSettings, server: String = "") {
        self.settings = settings
        if settings.insecure {
            Logger(label: "ferry.transport").warning(
                "TLS verification is off (insecure: true) for \(server.isEmpty ? "this remote" : server): anyone on the network path can read and change what is sent; set ca_file instead")
        }
    }

    public func perform(_ request: HTTPRequest, observer: any TransferObserver = NullTransferObserver()) async throws(BackendError) -> HTTPResponse {
        let pooled = try checkOut()
        let settings = self.settings
        let result = await BlockingIO.run { () -> Result<HTTPResponse, BackendError> in
            pooled.handle.perform(request, settings: settings, observer: observer)
        }
        checkIn(pooled)
        let response = try result.get()
        noteServer(response)
        return response
    }

    /// The same on the calling thread, which must be a blocking one (`BlockingIO`): for a
    /// request that goes with other blocking work (hashing the file it sends), so that a
    /// small file takes one trip to a blocking thread instead of two.
    public func performNow(_ request: HTTPRequest, observer: any TransferObserver = NullTransferObserver()) throws(BackendError) -> HTTPResponse {
        let pooled = try checkOut()
        defer { checkIn(pooled) }
        let response = try pooled.handle.perform(request, settings: settings, observer: observer).get()
        noteServer(response)
        return response
    }

    private func noteServer(_ response: HTTPResponse) {
        guard software.withLock({ $0 == nil }), let server = response.header("server"), !server.isEmpty else { return }
        software.withLock { if $0 == nil { $0 = server } }
    }

    private func checkOut() throws(BackendError) -> PooledHandle {
        if let handle = idle.withLock({ $0.popLast() }) { return handle }
        return PooledHandle(handle: try CurlEasyHandle())
    }

    private func checkIn(_ handle: PooledHandle) {
        idle.withLock { pool in
            if pool.count < 32 { pool.append(handle) }
        }
    }
}

/// A handle between uses. `@unchecked Sendable` is sound here because a handle is only
/// reachable from the pool (under its lock) or from the single `perform` call that checked
/// it out; no two threads ever hold it at once.
final class PooledHandle: @unchecked Sendable {
    let handle: CurlEasyHandle
    init(handle: CurlEasyHandle) { self.handle = handle }
}
