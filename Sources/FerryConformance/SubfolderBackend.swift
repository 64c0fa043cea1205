import FerryPluginAPI
import Foundation

/// Another backend seen through one of its folders: every path is taken relative to
/// `folder`, and every path in an answer is given back relative to it. Lets the
/// conformance suite give each check an empty root on a backend that is not empty (an
/// external plugin's store, a shared server).
public struct SubfolderBackend: Backend {
    public let base: any Backend
    public let folder: RelativePath

    public init(_ base: any Backend, folder: RelativePath) {
        self.base = base
        self.folder = folder
    }

    public var capabilities: BackendCapabilities { base.capabilities }
    public var displayName: String { "\(base.displayName)/\(folder)" }

    private func inner(_ path: RelativePath) -> RelativePath { folder.appending(path) }

    private func outer(_ entry: RemoteEntry) throws(BackendError) -> RemoteEntry {
        guard let relative = entry.path.relative(to: folder) else {
            throw BackendError(.protocolViolation, "\(base.displayName) answered with '\(entry.path)', outside \(folder)")
        }
        var result = entry
        result.path = relative
        return result
    }

    public func list(_ directory: RelativePath) async throws(BackendError) -> [RemoteEntry] {
        var entries: [RemoteEntry] = []
        for entry in try await base.list(inner(directory)) { entries.append(try outer(entry)) }
        return entries
    }

    public func stat(_ path: RelativePath) async throws(BackendError) -> RemoteEntry? {
        guard let entry = try await base.stat(inner(path)) else { return nil }
        return try outer(entry)
    }

    public func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        var moved = request
        moved.destination = inner(request.destination)
        var result = try await base.upload(moved, observer: observer)
        result.entry = try outer(result.entry)
        return result
    }

    public func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        var moved = request
        moved.source = inner(request.source)
        moved.expected.path = inner(request.expected.path)
        var result = try await base.download(moved, observer: observer)
        result.entry = try outer(result.entry)
        return result
    }

    public func read(_ path: RelativePath, range: Range<Int64>, expected: RemoteEntry,
                     observer: any TransferObserver) async throws(BackendError) -> Data {
        var moved = expected
        moved.path = inner(expected.path)
        return try await base.read(inner(path), range: range, expected: moved, observer: observer)
    }

    public func makeDirectory(_ path: RelativePath) async throws(BackendError) {
        try await base.makeDirectory(inner(path))
    }

    public func move(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        try await base.move(from: inner(source), to: inner(destination), overwrite: overwrite)
    }

    public func copy(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        try await base.copy(from: inner(source), to: inner(destination), overwrite: overwrite)
    }

    public func delete(_ path: RelativePath) async throws(BackendError) {
        try await base.delete(inner(path))
    }

    public func deleteFiles(_ paths: [RelativePath]) async throws(BackendError) -> [RelativePath: BackendError] {
        var failures: [RelativePath: BackendError] = [:]
        for (path, error) in try await base.deleteFiles(paths.map(inner)) {
            if let relative = path.relative(to: folder) { failures[relative] = error }
        }
        return failures
    }

    public func checkReachable() async throws(BackendError) {
        try await base.checkReachable()
    }

    public func discoverCapabilities() async throws(BackendError) -> BackendCapabilities {
        try await base.discoverCapabilities()
    }
}
