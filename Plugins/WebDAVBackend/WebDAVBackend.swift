import CurlTransport
import FerryPluginAPI
import Foundation
import Synchronization

/// A WebDAV server (nginx, Apache mod_dav, Nextcloud/ownCloud, lighttpd, …).
///
/// - Listing: `PROPFIND Depth: 1`, one folder at a time (servers refuse `infinity`),
///   parsed by `MultistatusParser`, which refuses hostile listings.
/// - Upload: `PUT` to `.NAME.ferry-part` in the target folder, then `MOVE` onto the final
///   name, so a partial file never appears under its final name; missing parents are
///   created with `MKCOL` (most servers answer 409 to a PUT into a missing folder). On a
///   server that honours ranged `PUT`, large files go in chunks and an interrupted upload
///   is continued after checking what the server holds (see WebDAVBackend+Upload.swift).
///   Where the probe saw that the server itself never leaves a cut-off `PUT` under the
///   name (`WebDAVServerFeatures.atomicPut`), a file that replaces one nobody else writes
///   goes in one `PUT` to its final name (`putsDirectly`).
/// - Modification times: `X-OC-Mtime` on every `PUT` (ownCloud, Nextcloud), else Ferry's
///   own dead property set with `PROPPATCH` where the server stores it
///   (`ModificationTimeProperty`).
/// - Download: `GET` into the core's partial file, continued with `Range` guarded by
///   `If-Range` (`RangedDownload`), so a remote file that changed meanwhile is fetched from the start.
public struct WebDAVBackend: Backend {
    let transport: CurlTransport
    let urls: ServerURL
    let limits: ListingLimits
    /// Large uploads are sent in ranged `PUT`s of this many bytes where the server honours
    /// them, so an interruption loses at most one chunk; 0 sends every file in one `PUT`.
    public let uploadChunkSize: Int64
    /// Set Ferry's mtime property after each upload where the server stores it but
    /// ignores `X-OC-Mtime`: one `PROPPATCH` per file, which on Apache takes longer than
    /// the `PUT` of a small file (see docs/webdav-servers.md).
    public let writesModificationTimeProperty: Bool
    /// Whether uploads may go straight to their final name where the server allows it
    /// safely (`direct_put`).
    public let directPut: DirectPut
    /// Folders known to exist, so MKCOL is sent once per folder per run.
    let knownFolders = KnownFolders()
    /// Whether uploads still need a PROPFIND to learn what the server stored.
    let confirmation = UploadConfirmation()
    /// What the server supports, probed once per backend (see WebDAVBackend+Probe.swift).
    let serverFeatureRecord = ServerFeatureRecord()
    /// How large each folder was when last listed, for publishing a batch (`FolderSizes`).
    let folderSizes = FolderSizes()
    /// Where the probe's findings are kept between runs (nil: probed in every run).
    let memory: (any BackendMemory)?

    public static let defaultUploadChunkSize: Int64 = 64 << 20

    /// The `direct_put` option.
    public enum DirectPut: String, Sendable, CaseIterable {
        /// One `PUT` to the final name where the probe found the server's `PUT` atomic.
        case auto
        /// Always a temporary name and a `MOVE`: for a server whose `PUT` passed the probe
        /// but is known to write in place in other cases (a large body, a full disk).
        case off
    }

    public init(baseURL: String, settings: CurlTransportSettings, limits: ListingLimits = ListingLimits(),
                uploadChunkSize: Int64 = WebDAVBackend.defaultUploadChunkSize,
                writesModificationTimeProperty: Bool = true, directPut: DirectPut = .auto,
                memory: (any BackendMemory)? = nil) throws(BackendError) {
        urls = try ServerURL(base: baseURL)
        transport = CurlTransport(settings: settings, server: urls.origin)
        self.limits = limits
        self.uploadChunkSize = max(0, uploadChunkSize)
        self.writesModificationTimeProperty = writesModificationTimeProperty
        self.directPut = directPut
        self.memory = memory
    }

    public var displayName: String { "webdav:" + urls.origin + urls.rootPath }

    /// What every WebDAV server offers, plus what the probe found once it has run
    /// (`discoverCapabilities()`, or the first upload).
    public var capabilities: BackendCapabilities {
        let features = serverFeatureRecord.current
        return BackendCapabilities(
            resumableUpload: features?.rangedPut.isSupported ?? false, rangedDownload: true, rangedRead: true, serverSideMove: true,
            preservesModificationTime: features.map(keepsModificationTime) ?? false, listingHasETags: false,
            atomicUpload: true, serverSideCopy: true, listingOmitsHiddenNames: features?.hidesDotNames ?? false,
            // A MOVE with `Overwrite: F` is refused onto a taken name, but the server looks
            // at the name before it renames, not in the same step: two writers can both pass
            // the look, and the later rename replaces the earlier version. Measured on
            // Apache 2.4 (threads) with four such MOVEs at once onto one name: two answered
            // 201 in 1 of 200 rounds. nginx with several worker processes does the same. So
            // several devices keep apart by the write lease here (docs/two-way-sync.md).
            conditionalNewNames: false, atomicMove: true)
    }

    /// Whether uploads keep their modification time on a server with these features.
    func keepsModificationTime(_ features: WebDAVServerFeatures) -> Bool {
        features.honoursOCMtime || (writesModificationTimeProperty && features.modificationTimeProperty.isSupported)
    }

    /// Whether an upload sets Ferry's property (the server does not take `X-OC-Mtime`).
    func setsModificationTimeProperty(_ features: WebDAVServerFeatures) -> Bool {
        !features.honoursOCMtime && writesModificationTimeProperty && features.modificationTimeProperty.isSupported
    }

    // MARK: Listing

    static let propfindBody = Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <D:propfind xmlns:D="DAV:" xmlns:f="\(ModificationTimeProperty.namespace)"><D:prop><D:resourcetype/><D:getcontentlength/><D:getlastmodified/><D:getetag/>\(ModificationTimeProperty.propfindElements)</D:prop></D:propfind>
        """.utf8)

    public func list(_ directory: RelativePath) async throws(BackendError) -> [RemoteEntry] {
        try await listIncludingTemporary(directory).filter { !TemporaryName.isTemporary($0.path.name) }.map(Self.normalized)
    }

    /// A folder's children as the server lists them, temporary names included (the probe
    /// looks for its own file).
    func listIncludingTemporary(_ directory: RelativePath) async throws(BackendError) -> [RemoteEntry] {
        let requestPath = urls.path(directory, isFolder: true)
        let response: HTTPResponse
        do {
            response = try await propfind(url: urls.origin + requestPath, depth: "1", path: directory)
        } catch where error.code == .notFound && directory.isRoot {
            knownFolders.noteRootMissing()
            throw error
        }
        let listing = try MultistatusParser.parse(response.body, requestPath: requestPath, directory: directory, limits: limits)
        knownFolders.insert(directory)
        folderSizes.record(directory, count: listing.children.count)
        return listing.children
    }

    public func stat(_ path: RelativePath) async throws(BackendError) -> RemoteEntry? {
        guard let parent = path.parent else {
            // The root is the configured URL, which may not exist (a typo in it): ask.
            do {
                _ = try await propfind(url: urls.url(.root, isFolder: true), depth: "0", path: path)
            } catch where error.code == .notFound {
                return nil
            }
            return RemoteEntry(path: .root, kind: .directory, size: 0, modifiedNanos: nil)
        }
        let response: HTTPResponse
        do {
            response = try await propfind(url: urls.url(path, isFolder: false), depth: "0", path: path)
        } catch where error.code == .notFound {
            return nil
        }
        // A file's Depth-0 answer names the file itself: parse it as a one-child listing of its parent.
        let listing = try MultistatusParser.parse(
            response.body, requestPath: urls.path(parent, isFolder: true), directory: parent, limits: limits)
        return listing.children.first { $0.path == path }.map(Self.normalized)
    }

    /// Apache marks an ETag weak (`W/"…"`) for the first second after a write and strong
    /// afterwards, with the same value: compare ETags without the weakness marker.
    static func normalized(_ entry: RemoteEntry) -> RemoteEntry {
        var entry = entry
        entry.etag = entry.etag.map(normalized(etag:))
        return entry
    }

    static func normalized(etag: String) -> String {
        etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
    }

    private func propfind(url: String, depth: String, path: RelativePath) async throws(BackendError) -> HTTPResponse {
        let response = try await transport.perform(HTTPRequest(
            method: "PROPFIND", url: url,
            headers: [("Depth", depth), ("Content-Type", "application/xml; charset=utf-8")],
            body: .data(Self.propfindBody), responseBody: .memory(limit: limits.maxBytes)))
        guard response.status == 207 else {
            throw HTTPErrorMapping.error(status: response.status, method: "PROPFIND", path: path.description,
                                         retryAfter: response.header("retry-after"))
        }
        return response
    }

    /// Any HTTP answer to a Depth-0 PROPFIND of the remote's folder (even 404) shows the
    /// server is there; only a failure to get one is an outage.
    public func checkReachable() async throws(BackendError) {
        _ = try await propfindRoot()
    }

    /// A Depth-0 PROPFIND of the remote's own folder, its body dropped.
    func propfindRoot() async throws(BackendError) -> HTTPResponse {
        try await transport.perform(HTTPRequest(
            method: "PROPFIND", url: urls.origin + urls.path(.root, isFolder: true),
            headers: [("Depth", "0"), ("Content-Type", "application/xml; charset=utf-8")],
            body: .data(Self.propfindBody), responseBody: .discard))
    }

    // MARK: Transfers

    public func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        var result = try await ParallelRangedDownload.run(transport: transport, url: urls.url(request.source, isFolder: false),
                                                  request: request, observer: observer)
        result.entry.modifiedNanos = Self.modificationTime(of: result.entry, expected: request.expected)
        return result
    }

    public func read(_ path: RelativePath, range: Range<Int64>, expected: RemoteEntry,
                     observer: any TransferObserver) async throws(BackendError) -> Data {
        try await RangedRead.run(transport: transport, url: urls.url(path, isFolder: false), path: path, range: range,
                                 expected: expected, observer: observer)
    }

    /// The listing's time when the server sent the listed version (same ETag): that is
    /// where a preserved modification time comes from, which `Last-Modified` does not
    /// carry. Otherwise the file changed since it was listed, and `Last-Modified` is the
    /// best there is.
    static func modificationTime(of received: RemoteEntry, expected: RemoteEntry) -> Int64? {
        if let sent = received.etag, let listed = expected.etag, normalized(etag: sent) == normalized(etag: listed) {
            return expected.modifiedNanos
        }
        return received.modifiedNanos ?? expected.modifiedNanos
    }

    // MARK: Namespace operations

    public func makeDirectory(_ path: RelativePath) async throws(BackendError) {
        if path.isRoot {
            try await ensureRoot()
            return
        }
        // One MKCOL per folder in flight, whatever the number of transfers into it.
        try await knownFolders.ensureDownTo(path) { folder async throws(BackendError) in try await createFolder(folder) }
    }

    /// One `MKCOL`, and a look before any refusal counts as an error: parallel clients
    /// creating the same new folder make the loser's `MKCOL` fail (409 on some servers, 403
    /// on Apache), and 405 means "something is there", which must be a folder.
    private func createFolder(_ folder: RelativePath) async throws(BackendError) {
        let url = urls.url(folder, isFolder: true)
        // The listing found the remote's own folder missing (a first push): made first,
        // rather than after this MKCOL's 409, a round trip before the first upload.
        if folder.components.count == 1 && knownFolders.rootWasMissing { try await ensureRoot() }
        var status = try await mkcol(url)
        if status == 409 && folder.components.count == 1 {
            // The remote's own folder does not exist yet: create it, then try again.
            try await ensureRoot()
            status = try await mkcol(url)
        }
        if (200..<300).contains(status) {
            folderSizes.record(folder, count: 0)
            return
        }
        var existing = try await stat(folder)
        if existing == nil && status == 409 {
            // Another client's MKCOL of this folder (or of its parent) may have been in
            // flight: it has answered by now, or failed. Once more, then look again.
            status = try await mkcol(url)
            if (200..<300).contains(status) { return }
            existing = try await stat(folder)
        }
        switch existing?.kind {
        case .directory?:
            return
        case .file?:
            throw BackendError(.alreadyExists, "a file is in the way of the folder", path: folder.description,
                               cause: "HTTP \(status) on MKCOL")
        case nil:
            var error = HTTPErrorMapping.error(status: status, method: "MKCOL", path: folder.description)
            // Still a race the next attempt may win, not a missing parent: the parents were
            // made first.
            if status == 409 { error = BackendError(.serverError, "the server refused to create the folder (409 Conflict, twice)",
                                                    path: folder.description, cause: "HTTP 409 on MKCOL", retryable: true) }
            throw error
        }
    }

    /// Creates the folders of the base URL's path, top down. Folders above the WebDAV
    /// share may refuse MKCOL in any way; only the last (the remote's root) must succeed.
    private func ensureRoot() async throws(BackendError) {
        try await knownFolders.ensure(.root) { () async throws(BackendError) in
            let segments = urls.rootPath.split(separator: "/")
            guard !segments.isEmpty else { return }
            let rootURL = urls.origin + "/" + segments.joined(separator: "/") + "/"
            // Mostly only the remote's own folder is missing, in a share that exists: its
            // MKCOL alone, and the folders above, top down, only when that is refused
            // (409 for a missing parent, or another answer from a server that words it otherwise).
            var status = try await mkcol(rootURL)
            if !((200..<300).contains(status) || status == 405) && segments.count > 1 {
                var path = "/"
                for segment in segments.dropLast() {
                    path += segment + "/"
                    _ = try await mkcol(urls.origin + path)
                }
                status = try await mkcol(rootURL)
            }
            // Parallel first uploads race to create the root; Apache answers the loser with
            // 403 rather than 405. The folder existing now is success.
            if !((200..<300).contains(status) || status == 405), try await propfindRoot().status != 207 {
                throw HTTPErrorMapping.error(status: status, method: "MKCOL", path: urls.rootPath)
            }
        }
    }

    private func mkcol(_ url: String) async throws(BackendError) -> Int {
        try await transport.perform(HTTPRequest(method: "MKCOL", url: url, responseBody: .discard)).status
    }

    public func move(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        if let parent = destination.parent { try await makeDirectory(parent) }
        try Self.checkMoved(try await transport.perform(moveRequest(from: source, to: destination, overwrite: overwrite)), source)
    }

    func moveRequest(from source: RelativePath, to destination: RelativePath, overwrite: Bool) -> HTTPRequest {
        HTTPRequest(method: "MOVE", url: urls.url(source, isFolder: false),
                    headers: [("Destination", urls.url(destination, isFolder: false)), ("Overwrite", overwrite ? "T" : "F")],
                    responseBody: .discard)
    }

    static func checkMoved(_ response: HTTPResponse, _ source: RelativePath) throws(BackendError) {
        guard response.isSuccess else {
            throw HTTPErrorMapping.error(status: response.status, method: "MOVE", path: source.description,
                                         retryAfter: response.header("retry-after"))
        }
    }

    /// `COPY` with `Depth: 0` (a file), after creating the target's parents: nginx answers
    /// 500 to a COPY into a missing folder, Apache 409.
    public func copy(from source: RelativePath, to destination: RelativePath, overwrite: Bool) async throws(BackendError) {
        if let parent = destination.parent { try await makeDirectory(parent) }
        let response = try await transport.perform(HTTPRequest(
            method: "COPY", url: urls.url(source, isFolder: false),
            headers: [("Destination", urls.url(destination, isFolder: false)), ("Overwrite", overwrite ? "T" : "F"),
                      ("Depth", "0")],
            responseBody: .discard))
        guard response.isSuccess else {
            throw HTTPErrorMapping.error(status: response.status, method: "COPY", path: source.description,
                                         retryAfter: response.header("retry-after"))
        }
    }

    public func delete(_ path: RelativePath) async throws(BackendError) {
        guard let entry = try await stat(path) else { return }
        if entry.kind == .directory {
            guard try await list(path).isEmpty else {
                throw BackendError(.alreadyExists, "the folder is not empty", path: path.description)
            }
        }
        let response = try await transport.perform(HTTPRequest(
            method: "DELETE", url: urls.url(path, isFolder: entry.kind == .directory), responseBody: .discard))
        guard response.isSuccess || response.status == 404 else {
            throw HTTPErrorMapping.error(status: response.status, method: "DELETE", path: path.description,
                                         retryAfter: response.header("retry-after"))
        }
        if entry.kind == .directory { knownFolders.remove(path) }
    }
}
