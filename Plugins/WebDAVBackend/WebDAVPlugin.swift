import CurlTransport
import FerryPluginAPI
import Foundation

extension WebDAVBackend {
    /// `type: webdav` in config.yml, and ad-hoc `dav://` / `davs://` URLs (as gvfs names them).
    public static let plugin = BackendPlugin(
        type: "webdav",
        summary: "a WebDAV server (nginx, Apache mod_dav, Nextcloud, ownCloud, lighttpd, …)",
        options: [
            .init("url", .url, required: true, summary: "the folder's URL, e.g. https://nas.local/dav/photos"),
            .init("upload_chunk_size", .string,
                  summary: "where the server honours ranged PUT, send larger files in parts of this size, "
                      + "so an interruption loses at most one part (default 64M; 0: one PUT per file)"),
            .init("keep_mtime", .boolean,
                  summary: "on servers that ignore X-OC-Mtime but store WebDAV properties (Apache), keep each file's "
                      + "modification time in a property: one PROPPATCH per upload (default true)"),
            .init("direct_put", .string, values: DirectPut.allCases.map(\.rawValue),
                  summary: "auto (default): where the probe finds that a PUT cut off half-way leaves the old file whole, "
                      + "send a replaced file in one PUT to its name instead of a PUT to a temporary name and a MOVE; "
                      + "off: always the temporary name"),
        ] + RemoteTransportOptions.options,
        urlSchemes: ["dav", "davs"],
        // Per server, the probe adds resumable-upload (verified ranged PUT) and mtime
        // (X-OC-Mtime or Ferry's dead property): see `ferry plugins --probe`.
        capabilities: BackendCapabilities(rangedDownload: true, rangedRead: true, serverSideMove: true, atomicUpload: true, serverSideCopy: true,
                                          conditionalNewNames: false, atomicMove: true),
        make: { settings throws(BackendError) in
            let url = baseURL(try settings.required("url"))
            let transport = try RemoteTransportOptions.transportSettings(settings, environment: ProcessInfo.processInfo.environment)
            let backend = try WebDAVBackend(baseURL: url, settings: transport, uploadChunkSize: try uploadChunkSize(settings),
                                            writesModificationTimeProperty: settings.options["keep_mtime"] != "false",
                                            directPut: try directPut(settings), memory: settings.memory)
            PlainTextCredentials.warnIfNeeded(baseURL: url, credentials: transport.credentials, remote: settings.remoteName)
            return backend
        }
    )

    static func uploadChunkSize(_ settings: BackendSettings) throws(BackendError) -> Int64 {
        guard let text = settings.options["upload_chunk_size"] else { return defaultUploadChunkSize }
        guard !text.contains("."), let bytes = Quantity.bytes(text), bytes == 0 || bytes >= 1 << 20 else {
            throw BackendError(.invalidName, "remote '\(settings.remoteName)': upload_chunk_size must be 0 or a size "
                               + "of at least 1M, such as 64M or 1G (got '\(text)')")
        }
        return bytes
    }

    /// config.yml's reader checks the value already; settings made elsewhere (plugin tests)
    /// are checked here.
    static func directPut(_ settings: BackendSettings) throws(BackendError) -> DirectPut {
        guard let text = settings.options["direct_put"] else { return .auto }
        guard let value = DirectPut(rawValue: text) else {
            throw BackendError(.invalidName, "remote '\(settings.remoteName)': direct_put must be auto or off (got '\(text)')")
        }
        return value
    }

    /// `dav://` → `http://`, `davs://` → `https://`; http(s) URLs pass through.
    static func baseURL(_ text: String) -> String {
        if text.lowercased().hasPrefix("davs://") { return "https://" + text.dropFirst(7) }
        if text.lowercased().hasPrefix("dav://") { return "http://" + text.dropFirst(6) }
        return text
    }
}
