import CurlTransport
import FerryPluginAPI

extension HTTPBackend {
    /// Creates folders with `MKCOL` (nginx `dav_methods … MKCOL`, WebDAV servers, most
    /// upload servers), top down, once per folder per run. A server that knows no `MKCOL`
    /// cannot have empty folders: there folders appear when a file is uploaded into them,
    /// and asking for one is an `unsupported` error.
    public func makeDirectory(_ path: RelativePath) async throws(BackendError) {
        try refuseIfReadOnly(path)
        if path.isRoot {
            try await ensureRoot()
            return
        }
        // One MKCOL per folder in flight, whatever the number of transfers into it.
        try await knownFolders.ensureDownTo(path) { folder async throws(BackendError) in try await createFolder(folder) }
    }

    private func createFolder(_ folder: RelativePath) async throws(BackendError) {
        var status = try await mkcol(urls.url(folder, isFolder: true))
        if status == 409 && folder.components.count == 1 {
            // The remote's own folder does not exist yet: create it, then try again.
            try await ensureRoot()
            status = try await mkcol(urls.url(folder, isFolder: true))
        }
        if (200..<300).contains(status) { return }
        // 405 is "exists" on WebDAV servers but "no MKCOL here" on others; parallel
        // uploads creating one folder make the loser fail. Either way: is it there now?
        if try await head(folder)?.kind == .directory { return }
        if status == 405 || status == 501 {
            throw BackendError(.unsupported, "the server cannot create folders (MKCOL answered \(status)); "
                               + "folders appear on it when files are uploaded into them", path: folder.description)
        }
        throw HTTPErrorMapping.error(status: status, method: "MKCOL", path: folder.description)
    }

    /// Creates the folders of the base URL's path, top down. Folders above the remote's
    /// own may refuse `MKCOL` in any way; only the last must exist afterwards.
    private func ensureRoot() async throws(BackendError) {
        try await knownFolders.ensure(.root) { () async throws(BackendError) in try await createRoot() }
    }

    private func createRoot() async throws(BackendError) {
        let segments = urls.rootPath.split(separator: "/")
        var path = "/"
        for (index, segment) in segments.enumerated() {
            path += segment + "/"
            let status = try await mkcol(urls.origin + path)
            guard index == segments.count - 1, !(200..<300).contains(status) else { continue }
            let root = try await transport.perform(HTTPRequest(method: "HEAD", url: urls.origin + path, responseBody: .discard))
            guard root.isSuccess else {
                if status == 405 || status == 501 {
                    throw BackendError(.unsupported, "the server cannot create folders (MKCOL answered \(status)); "
                                       + "folders appear on it when files are uploaded into them", path: urls.rootPath)
                }
                throw HTTPErrorMapping.error(status: status, method: "MKCOL", path: urls.rootPath)
            }
        }
    }

    private func mkcol(_ url: String) async throws(BackendError) -> Int {
        try await transport.perform(HTTPRequest(method: "MKCOL", url: url, responseBody: .discard)).status
    }

    /// Renames with `MOVE`, where the server supports it (`rename: move`, or `auto` and
    /// the probe found it).
    public func move(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        try refuseIfReadOnly(source)
        guard try await usesRename(in: source.parent ?? .root) else {
            let reason = options.rename == .none ? "rename: none" : "the server does not support MOVE"
            throw BackendError(.unsupported, "this remote cannot rename files (\(reason))", path: source.description)
        }
        try await sendMove(from: source, to: destination, overwrite: overwrite)
    }

    /// One `MOVE`; a missing target folder is created and the `MOVE` sent again.
    func sendMove(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        let request = HTTPRequest(
            method: "MOVE", url: urls.url(source, isFolder: false),
            headers: [("Destination", urls.url(destination, isFolder: false)), ("Overwrite", overwrite ? "T" : "F")],
            responseBody: .discard)
        var response = try await transport.perform(request)
        if response.status == 409, let parent = destination.parent {
            knownFolders.remove(parent)
            try await makeDirectory(parent)
            response = try await transport.perform(request)
        }
        guard response.isSuccess else {
            throw HTTPErrorMapping.error(status: response.status, method: "MOVE", path: source.description,
                                         retryAfter: response.header("retry-after"))
        }
    }

    /// Removes a file, or a folder that the index shows empty (some servers, nginx among
    /// them, would delete a folder with everything in it).
    public func delete(_ path: RelativePath) async throws(BackendError) {
        try refuseIfReadOnly(path)
        guard options.allowsDelete else {
            throw BackendError(.unsupported, "deleting is turned off for this remote (delete: false)", path: path.description)
        }
        guard let entry = try await stat(path) else { return }
        let isFolder = entry.kind == .directory
        if isFolder, options.listing != .none {
            guard try await list(path).isEmpty else {
                throw BackendError(.alreadyExists, "the folder is not empty", path: path.description)
            }
        }
        let response = try await transport.perform(HTTPRequest(
            method: "DELETE", url: urls.url(path, isFolder: isFolder), responseBody: .discard))
        guard response.isSuccess || response.status == 404 else {
            throw HTTPErrorMapping.error(status: response.status, method: "DELETE", path: path.description,
                                         retryAfter: response.header("retry-after"))
        }
        if isFolder { knownFolders.remove(path) }
    }

    /// Deletes a file Ferry itself left (a temporary name, a probe, a torn upload) when
    /// deleting is allowed, without asking first whether it is there.
    func removeQuietly(_ path: RelativePath) async throws(BackendError) {
        guard options.allowsDelete else { return }
        _ = try await transport.perform(HTTPRequest(method: "DELETE", url: urls.url(path, isFolder: false),
                                                    responseBody: .discard))
    }

    /// `upload: none`: the one clear answer to every change.
    func refuseIfReadOnly(_ path: RelativePath) throws(BackendError) {
        guard options.upload == .none else { return }
        throw BackendError(.readOnly, "this remote is read-only (upload: none); set upload to put or post to send files to it",
                           path: path.description)
    }
}
