import CurlTransport
import FerryPluginAPI
import Foundation

extension S3Backend {
    /// Writes the folder's marker object (`KEY/`, zero bytes), so that an empty folder
    /// exists; parents need none (a key below them makes them exist).
    public func makeDirectory(_ path: RelativePath) async throws(BackendError) {
        if path.isRoot { return }
        try await knownFolders.ensure(path) { () async throws(BackendError) in
            let response = try await send("PUT", url: addressing.objectURL(key: addressing.folderPrefix(path)),
                                          headers: [("Content-Type", "application/x-directory")], body: .data(Data()))
            guard response.isSuccess else { throw failure(response, method: "PUT (folder marker)", path: path) }
        }
    }

    /// `CopyObject` with the source's metadata (its modification time), after a look at
    /// the target when it must not be overwritten.
    public func copy(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        if !overwrite, try await stat(destination) != nil {
            throw BackendError(.alreadyExists, "the target exists", path: destination.description)
        }
        let response = try await send(
            "PUT", url: addressing.objectURL(key: addressing.key(destination)),
            headers: [("x-amz-copy-source", addressing.copySource(key: addressing.key(source))),
                      ("x-amz-metadata-directive", "COPY")])
        guard response.isSuccess else {
            let error = failure(response, method: "PUT (CopyObject)", path: source)
            throw error.code == .notFound ? BackendError(.notFound, "the file to copy is not in the store", path: source.description,
                                                         cause: error.cause) : error
        }
        // A copy can fail after the store has answered 200: the error is then in the body.
        if String(decoding: response.body.prefix(512), as: UTF8.self).contains("<Error") {
            throw S3ErrorResponse(body: response.body).error(status: 500, method: "PUT (CopyObject)", path: source.description,
                                                             retryAfter: nil, addressing: addressing)
        }
    }

    /// A copy, then the source's deletion: S3 has no rename. Both are conditional on the
    /// version the first look found (`If-Match` on the delete: SeaweedFS, moto and AWS
    /// honour it), so a version another writer put under the name between the copy and the
    /// delete is not deleted: the move then fails with `alreadyExists` (412) and the name
    /// keeps the newer version. A store that ignores the condition leaves that window open.
    public func move(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        let head = try await send("HEAD", url: addressing.objectURL(key: addressing.key(source)), responseBody: .discard)
        guard head.status == 200 else {
            if head.status == 404 { throw BackendError(.notFound, "nothing to move", path: source.description) }
            throw failure(head, method: "HEAD", path: source)
        }
        let etag = head.header("etag")
        // The copy itself is not conditional: SeaweedFS refused a signed
        // `x-amz-copy-source-if-match` (403 SignatureDoesNotMatch). The caller compares what
        // was copied with the version it meant (`TransferExecutor.displace`).
        try await copy(from: source, to: destination, overwrite: overwrite)
        try await deleteKey(addressing.key(source), path: source, ifMatch: etag)
    }

    /// Removes an object, or an empty folder's marker; a missing one is no error, a
    /// folder with anything in it is refused.
    public func delete(_ path: RelativePath) async throws(BackendError) {
        guard !path.isRoot else {
            throw BackendError(.invalidName, "the remote's root cannot be deleted", path: path.description)
        }
        let head = try await send("HEAD", url: addressing.objectURL(key: addressing.key(path)), responseBody: .discard)
        if head.status == 200 {
            try await deleteObject(path)
            return
        }
        guard head.status == 404 else { throw failure(head, method: "HEAD", path: path) }
        let marker = addressing.folderPrefix(path)
        let page = try await listPage(prefix: marker, delimiter: nil, token: nil, maxKeys: 2, path: path)
        if page.objects.contains(where: { $0.key != marker }) {
            throw BackendError(.alreadyExists, "the folder is not empty", path: path.description)
        }
        if page.objects.contains(where: { $0.key == marker }) {
            try await deleteKey(marker, path: path)
        }
        knownFolders.remove(path)
    }

    func deleteObject(_ path: RelativePath) async throws(BackendError) {
        try await deleteKey(addressing.key(path), path: path)
    }

    func deleteKey(_ key: String, path: RelativePath, ifMatch etag: String? = nil) async throws(BackendError) {
        let response = try await send("DELETE", url: addressing.objectURL(key: key), headers: etag.map { [("If-Match", $0)] } ?? [])
        if etag != nil, response.status == 412 {
            throw BackendError(.alreadyExists, "another writer replaced the file while it was moved; it is kept under its name",
                               path: path.description, cause: "HTTP 412 on DELETE with If-Match")
        }
        guard response.isSuccess || response.status == 404 else { throw failure(response, method: "DELETE", path: path) }
    }
}
