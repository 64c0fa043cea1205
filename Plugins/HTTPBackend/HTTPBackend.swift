import CurlTransport
import FerryPluginAPI
import Foundation

/// A plain HTTP file server or upload endpoint: nginx with `autoindex`, Apache
/// `mod_autoindex`, `python3 -m http.server`, photo servers that take multipart uploads.
///
/// - Listing: `GET` of the folder's URL (with a trailing slash), read as an nginx JSON
///   index or an HTML directory page (`listing:`), refused as a whole when hostile. An
///   HTML index gives names only: each file's size and date come from a `HEAD`, a few at
///   a time, at most `IndexLimits.maxHeadRequests` per folder.
/// - Stat: `HEAD`; a redirect to the same URL with a slash means a folder.
/// - Download: `GET`, continued with `Range` guarded by `If-Range` and the
///   `Content-Range` total (`RangedDownload`), as for WebDAV.
/// - Upload: `PUT`, or `POST multipart/form-data` to an endpoint (`upload:`), to the
///   temporary name `.NAME.ferry-part` and then `MOVE`d onto the final name when the
///   server can rename (`rename:`, probed once by default). Without rename a file is
///   sent to its final name: an upload cut short can leave a partial file there until
///   the next run replaces it, so the capabilities then say `atomicUpload: false`. Every
///   upload is checked with `HEAD` afterwards: the server must have the whole size.
/// - Delete: `DELETE`, unless `delete: false`. `upload: none` makes the remote
///   read-only: every change is refused with `readOnly`.
public struct HTTPBackend: Backend {
    let transport: CurlTransport
    let urls: ServerURL
    let options: HTTPRemoteOptions
    let limits: IndexLimits
    let renameSupport: RenameSupport
    /// Folders known to exist, so that `MKCOL` is sent once per folder per run.
    let knownFolders = KnownFolders()
    let hiddenNames = HiddenNameVisibility()

    public init(baseURL: String, options: HTTPRemoteOptions = HTTPRemoteOptions(), settings: CurlTransportSettings,
                limits: IndexLimits = IndexLimits()) throws(BackendError) {
        urls = try ServerURL(base: baseURL)
        transport = CurlTransport(settings: settings, server: urls.origin)
        self.options = options
        self.limits = limits
        renameSupport = RenameSupport(options.rename)
    }

    public var displayName: String { "http:" + urls.origin + urls.rootPath }

    /// Honest about what is known now: with `rename: auto`, move and atomic uploads are
    /// claimed only once the probe has shown that `MOVE` works.
    public var capabilities: BackendCapabilities {
        let renames = options.upload != .none && renameSupport.known == true
        return BackendCapabilities(resumableUpload: false, rangedDownload: true, rangedRead: true, serverSideMove: renames,
                                   preservesModificationTime: false, listingHasETags: false, atomicUpload: renames,
                                   listingOmitsHiddenNames: hiddenNames.serverHidesDotNames ?? false)
    }

    /// Reads the root's index once if no index page has been read yet, to learn whether
    /// the server hides names that start with `.`.
    public func discoverCapabilities() async throws(BackendError) -> BackendCapabilities {
        if hiddenNames.serverHidesDotNames == nil, options.listing != .none {
            _ = try? await list(.root)
        }
        return capabilities
    }

    // MARK: Listing

    public func list(_ directory: RelativePath) async throws(BackendError) -> [RemoteEntry] {
        guard options.listing != .none else {
            throw BackendError(.unsupported, "this remote has listing: none, so its folders cannot be listed "
                               + "(set listing to auto, json or html if the server has a folder index)",
                               path: directory.description)
        }
        let folderPath = urls.path(directory, isFolder: true)
        let url = urls.origin + folderPath
        var headers: [(String, String)] = []
        switch options.listing {
        case .json: headers.append(("Accept", "application/json"))
        case .html: headers.append(("Accept", "text/html"))
        case .auto, .none: break
        }
        let response: HTTPResponse
        do {
            response = try await transport.perform(HTTPRequest(
                method: "GET", url: url, headers: headers, responseBody: .memory(limit: limits.maxBytes)))
        } catch {
            // The transport's own refusals (an index larger than the limit) name no path.
            var error = error
            if error.path == nil { error.path = directory.description }
            throw error
        }
        guard response.status != 404, response.status != 410 else {
            throw BackendError(.notFound, "no such folder on the server", path: directory.description,
                               cause: "HTTP \(response.status) on GET")
        }
        guard response.isSuccess else {
            throw HTTPErrorMapping.error(status: response.status, method: "GET", path: directory.description,
                                         retryAfter: response.header("retry-after"))
        }
        hiddenNames.learn(serverHeader: response.header("server"))
        // Relative links resolve against the page's own address: one the server moved is
        // not the folder that was asked for.
        guard IndexHref.sameLocation(response.effectiveURL, url) else {
            throw IndexRefusal.error("the server redirected the listing to \(response.effectiveURL); "
                                     + "set the remote's url to the final address", directory: directory)
        }
        let format: FolderIndexFormat
        switch options.listing {
        case .json: format = .json
        case .html: format = .html
        case .auto, .none:
            guard let detected = FolderIndexFormat.detect(contentType: response.header("content-type"), body: response.body) else {
                throw IndexRefusal.error("the folder's page is neither a JSON nor an HTML index (Content-Type: "
                                         + "\(response.header("content-type") ?? "none"))", directory: directory)
            }
            format = detected
        }
        let entries: [IndexEntry]
        switch format {
        case .json:
            entries = try JSONIndexParser.parse(response.body, directory: directory, limits: limits)
        case .html:
            entries = try HTMLIndexParser.parse(response.body, origin: urls.origin, folderPath: folderPath,
                                                directory: directory, limits: limits)
        }
        let listed = try await completed(entries.filter { !TemporaryName.isTemporary($0.name) }, in: directory)
        knownFolders.insert(directory)
        return listed.sorted { $0.path < $1.path }
    }

    /// Index entries as remote entries: files whose size the index did not give are asked
    /// for with `HEAD`, `headConcurrency` at a time; one that is gone by then is left out.
    private func completed(_ entries: [IndexEntry], in directory: RelativePath) async throws(BackendError) -> [RemoteEntry] {
        var complete: [RemoteEntry] = []
        var unknown: [RelativePath] = []
        for entry in entries {
            let path = try directory.appending(entry.name)
            if entry.kind == .file && entry.size == nil {
                unknown.append(path)
            } else {
                complete.append(RemoteEntry(path: path, kind: entry.kind, size: entry.size ?? 0,
                                            modifiedNanos: entry.modifiedNanos))
            }
        }
        guard !unknown.isEmpty else { return complete }
        guard unknown.count <= limits.maxHeadRequests else {
            throw IndexRefusal.error("the HTML index lists \(unknown.count) files without sizes; learning them would take "
                                     + "more than \(limits.maxHeadRequests) HEAD requests (use a JSON index: listing: json)",
                                     directory: directory)
        }
        let results = await withTaskGroup(of: Result<RemoteEntry?, BackendError>.self) { group in
            var results: [Result<RemoteEntry?, BackendError>] = []
            var pending = unknown[...]
            func startNext() {
                guard let path = pending.popFirst() else { return }
                group.addTask {
                    do throws(BackendError) {
                        return .success(try await self.head(path))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            for _ in 0..<limits.headConcurrency { startNext() }
            while let result = await group.next() {
                results.append(result)
                if case .failure = result {
                    group.cancelAll()
                    break
                }
                startNext()
            }
            return results
        }
        for result in results {
            if let entry = try result.get() { complete.append(entry) }
        }
        return complete
    }

    // MARK: Stat

    /// Any HTTP answer to a `HEAD` of the remote's folder (even 404) shows the server is
    /// there; only failing to get one is an outage. Cheaper than the default listing, which
    /// for an HTML index costs a `HEAD` per file, and it works with `listing: none`.
    public func checkReachable() async throws(BackendError) {
        _ = try await transport.perform(HTTPRequest(method: "HEAD", url: urls.origin + urls.rootPath, responseBody: .discard))
    }

    public func stat(_ path: RelativePath) async throws(BackendError) -> RemoteEntry? {
        guard !path.isRoot else {
            return RemoteEntry(path: .root, kind: .directory, size: 0, modifiedNanos: nil)
        }
        return try await head(path)
    }

    /// The file or folder at `path` as `HEAD` shows it, nil when nothing is there.
    func head(_ path: RelativePath) async throws(BackendError) -> RemoteEntry? {
        let url = urls.url(path, isFolder: false)
        let response = try await transport.perform(HTTPRequest(method: "HEAD", url: url, responseBody: .discard))
        if response.status == 404 || response.status == 410 {
            // Servers that do not redirect a folder's URL without its slash answer on the other one.
            let folder = try await transport.perform(HTTPRequest(
                method: "HEAD", url: urls.url(path, isFolder: true), responseBody: .discard))
            if folder.status == 404 || folder.status == 410 { return nil }
            guard folder.isSuccess else {
                throw HTTPErrorMapping.error(status: folder.status, method: "HEAD", path: path.description,
                                             retryAfter: folder.header("retry-after"))
            }
            return RemoteEntry(path: path, kind: .directory, size: 0,
                               modifiedNanos: folder.header("last-modified").flatMap(HTTPDate.parse))
        }
        guard response.isSuccess else {
            throw HTTPErrorMapping.error(status: response.status, method: "HEAD", path: path.description,
                                         retryAfter: response.header("retry-after"))
        }
        let modified = response.header("last-modified").flatMap(HTTPDate.parse)
        // nginx, Apache and Python redirect a folder's URL to the same URL with a slash.
        if response.effectiveURL.hasSuffix("/") && !IndexHref.sameLocation(response.effectiveURL, url) {
            return RemoteEntry(path: path, kind: .directory, size: 0, modifiedNanos: modified)
        }
        guard let length = response.header("content-length"), let size = Int64(length), size >= 0 else {
            throw BackendError(.protocolViolation, "the server's answer to HEAD has no Content-Length", path: path.description)
        }
        return RemoteEntry(path: path, kind: .file, size: size, modifiedNanos: modified, etag: response.header("etag"))
    }

    // MARK: Download

    public func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        try await ParallelRangedDownload.run(transport: transport, url: urls.url(request.source, isFolder: false),
                                     request: request, observer: observer)
    }

    public func read(_ path: RelativePath, range: Range<Int64>, expected: RemoteEntry,
                     observer: any TransferObserver) async throws(BackendError) -> Data {
        try await RangedRead.run(transport: transport, url: urls.url(path, isFolder: false), path: path, range: range,
                                 expected: expected, observer: observer)
    }
}
