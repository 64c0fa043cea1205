import Foundation
import FerryPluginAPI
import FerryTestSupport

/// One device's way to the shared in-memory remote: every call waits at the
/// `Interleaving`'s gate, and ends as the gate says (carried out, failed before or after
/// reaching the remote, or the device crashed).
struct InterleavingBackend: Backend {
    let inner: InMemoryBackend
    let device: Int
    let interleaving: Interleaving

    var capabilities: BackendCapabilities { inner.capabilities }
    var displayName: String { inner.displayName }

    private func gated<T>(_ call: String, path: String?,
                          _ body: () async throws(BackendError) -> T) async throws(BackendError) -> T {
        switch await interleaving.pass(Self.traced(call), device: device) {
        case .proceed:
            return try await body()
        case let .failBefore(code):
            throw BackendError(code, code == .serverError ? "503 Service Unavailable (simulated)" : "connection refused (simulated)",
                               path: path)
        case .loseAnswer:
            _ = try? await body()
            throw BackendError(.connectionLost, "the connection dropped before the answer (simulated)", path: path)
        case let .crash(afterEffect):
            if afterEffect { _ = try? await body() }
            throw BackendError(.cancelled, "the device crashed (simulated)", path: path)
        case .down:
            throw BackendError(.cancelled, "the device crashed (simulated)", path: path)
        }
    }

    /// The call as the trace shows it: a catalog's name carries a hash of the device's
    /// folder path, which is another temporary folder each time the seed is run.
    private static func traced(_ call: String) -> String {
        call.replacingOccurrences(of: #"-[0-9a-f]{16}\.json"#, with: "-(folder).json", options: .regularExpression)
    }

    private static func shown(_ path: RelativePath) -> String { path.isRoot ? "/" : path.string }

    func list(_ directory: RelativePath) async throws(BackendError) -> [RemoteEntry] {
        try await gated("list \(Self.shown(directory))", path: directory.string) { () async throws(BackendError) in
            try await inner.list(directory)
        }
    }

    func stat(_ path: RelativePath) async throws(BackendError) -> RemoteEntry? {
        try await gated("stat \(Self.shown(path))", path: path.string) { () async throws(BackendError) in
            try await inner.stat(path)
        }
    }

    func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        let call = "upload \(request.destination.string)" + (request.expectsNewFile ? " (new)" : "")
        return try await gated(call, path: request.destination.string) { () async throws(BackendError) in
            try await inner.upload(request, observer: observer)
        }
    }

    func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        try await gated("download \(request.source.string)", path: request.source.string) { () async throws(BackendError) in
            try await inner.download(request, observer: observer)
        }
    }

    func makeDirectory(_ path: RelativePath) async throws(BackendError) {
        try await gated("mkdir \(Self.shown(path))", path: path.string) { () async throws(BackendError) in
            try await inner.makeDirectory(path)
        }
    }

    func move(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        let call = "move \(source.string) -> \(destination.string)" + (overwrite ? " (overwrite)" : "")
        try await gated(call, path: source.string) { () async throws(BackendError) in
            try await inner.move(from: source, to: destination, overwrite: overwrite)
        }
    }

    func delete(_ path: RelativePath) async throws(BackendError) {
        try await gated("delete \(path.string)", path: path.string) { () async throws(BackendError) in
            try await inner.delete(path)
        }
    }

    /// One call per path, each through the gate.
    func deleteFiles(_ paths: [RelativePath]) async throws(BackendError) -> [RelativePath: BackendError] {
        try await deleteOneAtATime(paths) { path throws(BackendError) in try await delete(path) }
    }

    func checkReachable() async throws(BackendError) {
        try await gated("probe", path: nil) { () async throws(BackendError) in
            try await inner.checkReachable()
        }
    }
}
