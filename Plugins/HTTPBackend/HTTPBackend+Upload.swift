import CurlTransport
import FerryPluginAPI
import FerrySystem
import Foundation

extension HTTPBackend {
    public func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        try refuseIfReadOnly(request.destination)
        guard let parent = request.destination.parent else {
            throw BackendError(.invalidName, "cannot upload onto the remote's root folder")
        }
        // A source that is no longer the planned version is not sent at all: without a
        // rename, a refused upload would otherwise already be under its final name.
        guard try Self.sourceIsUnchanged(request) else {
            throw BackendError(.changedDuringTransfer, "the file changed since it was planned", path: request.source)
        }
        let content = HTTPRequest.BodyPart.file(path: request.source, offset: 0, length: request.size)
        if try await usesRename(in: parent) {
            let temporary = try parent.appending(TemporaryName.for(request.destination.name, tag: request.temporaryTag))
            try await send(content, modifiedNanos: request.modifiedNanos, to: temporary, observer: observer)
            guard try Self.sourceIsUnchanged(request) else {
                try? await removeQuietly(temporary)
                throw BackendError(.changedDuringTransfer, "the file changed while it was being sent", path: request.source)
            }
            do {
                try await sendMove(from: temporary, to: request.destination, overwrite: true)
            } catch {
                try? await removeQuietly(temporary)
                throw error
            }
        } else {
            try await send(content, modifiedNanos: request.modifiedNanos, to: request.destination, observer: observer)
            guard try Self.sourceIsUnchanged(request) else {
                // What the server has now is torn; take it away if the server lets us.
                try? await removeQuietly(request.destination)
                throw BackendError(.changedDuringTransfer, "the file changed while it was being sent", path: request.source)
            }
        }
        // The server must have all of it: a PUT without rename, or an upload endpoint, may
        // answer success for a body it stored only in part.
        guard let entry = try await head(request.destination), entry.kind == .file else {
            throw BackendError(.io, "the file is not on the server after the upload", path: request.destination.description,
                               retryable: true)
        }
        guard entry.size == request.size else {
            throw BackendError(.io, "the server stored \(entry.size) bytes instead of \(request.size)",
                               path: request.destination.description, retryable: true)
        }
        return UploadResult(entry: entry, bytesSent: request.size, resumedFrom: 0)
    }

    static func sourceIsUnchanged(_ request: UploadRequest) throws(BackendError) -> Bool {
        guard let source = try BackendError.catching({ try LocalFileSystem.metadata(request.source) }) else { return false }
        return source.size == request.size && source.modifiedNanos == request.modifiedNanos
    }

    /// Sends bytes to `path` with the configured method. A `PUT` carries the source's
    /// modification time as its `Date`, which nginx gives the stored file (to the second;
    /// a `MOVE` keeps it) and other servers ignore; the `HEAD` after the upload records
    /// whatever the server kept.
    func send(_ content: HTTPRequest.BodyPart, modifiedNanos: Int64?, to path: RelativePath,
              observer: any TransferObserver) async throws(BackendError) {
        switch options.upload {
        case .none:
            try refuseIfReadOnly(path)
        case .put:
            let body: HTTPRequest.Body
            switch content {
            case let .data(data): body = .data(data)
            case let .file(source, offset, length): body = .file(path: source, offset: offset, length: length)
            }
            let put = HTTPRequest(method: "PUT", url: urls.url(path, isFolder: false),
                                  headers: modifiedNanos.map { [("Date", HTTPDate.format(nanos: $0))] } ?? [],
                                  body: body, responseBody: .memory(limit: 64 * 1024))
            var response = try await transport.perform(put, observer: observer)
            if (response.status == 409 || response.status == 404), let parent = path.parent {
                // Servers without nginx's create_full_put_path want the folders first.
                knownFolders.remove(parent)
                try await makeDirectory(parent)
                response = try await transport.perform(put, observer: observer)
            }
            guard response.isSuccess else {
                throw HTTPErrorMapping.error(status: response.status, method: "PUT", path: path.description,
                                             retryAfter: response.header("retry-after"))
            }
        case let .post(endpoint, field):
            let form = MultipartForm()
            let body = form.parts(fields: [(name: "path", value: try serverPath(path))], fileField: field,
                                  fileName: path.name, content: content)
            let response = try await transport.perform(HTTPRequest(
                method: "POST", url: endpoint, headers: [("Content-Type", form.contentType)], body: .parts(body),
                responseBody: .memory(limit: 64 * 1024)), observer: observer)
            guard response.isSuccess else {
                throw HTTPErrorMapping.error(status: response.status, method: "POST", path: path.description,
                                             retryAfter: response.header("retry-after"))
            }
        }
    }

    /// The decoded URL path a file has on the server (`/photos/2024/IMG 1.jpg`): what a
    /// multipart upload names as its target in the form field `path`.
    func serverPath(_ path: RelativePath) throws(BackendError) -> String {
        guard let root = PercentEncoding.decode(Substring(urls.rootPath)) else {
            throw BackendError(.invalidName, "the remote's URL has an invalid percent-encoding in its path", path: urls.rootPath)
        }
        return root + path.string
    }

    /// Whether uploads go through a temporary name; with `rename: auto` the first upload
    /// finds out, in its own folder.
    func usesRename(in folder: RelativePath) async throws(BackendError) -> Bool {
        try await renameSupport.resolve { await self.probeRename(in: folder) }
    }

    /// Sends an empty file to a temporary name, renames it with `MOVE` and checks that the
    /// new name exists. 405 or 501 (method unknown), 400 or 403 (refused) mean no rename;
    /// a server error or a lost connection is an error, so the probe runs again later.
    /// The probe's file is deleted afterwards when deleting is allowed; otherwise it stays
    /// as a hidden `.ferry-probe-….ferry-part`, which listings leave out.
    func probeRename(in folder: RelativePath) async -> Result<Bool, BackendError> {
        do {
            let token = MultipartForm.randomHex(bytes: 6)
            let probe = try folder.appending(".ferry-probe-\(token)" + TemporaryName.suffix)
            let moved = try folder.appending(".ferry-probe-\(token)-moved" + TemporaryName.suffix)
            try await send(.data(Data()), modifiedNanos: nil, to: probe, observer: NullTransferObserver())
            let response = try await transport.perform(HTTPRequest(
                method: "MOVE", url: urls.url(probe, isFolder: false),
                headers: [("Destination", urls.url(moved, isFolder: false)), ("Overwrite", "T")], responseBody: .discard))
            switch response.status {
            case 200..<300:
                let renamed = try await head(moved) != nil
                try? await removeQuietly(moved)
                try? await removeQuietly(probe)
                return .success(renamed)
            case 400, 403, 405, 501:
                try? await removeQuietly(probe)
                return .success(false)
            default:
                try? await removeQuietly(probe)
                return .failure(HTTPErrorMapping.error(status: response.status, method: "MOVE", path: probe.description,
                                                       retryAfter: response.header("retry-after")))
            }
        } catch {
            return .failure(error)
        }
    }
}
