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
        ] + RemoteTransportOptions.options,
        urlSchemes: ["dav", "davs"],
        capabilities: BackendCapabilities(rangedDownload: true, serverSideMove: true, atomicUpload: true),
        make: { settings throws(BackendError) in
            try WebDAVBackend(baseURL: try baseURL(settings.required("url")),
                              settings: try RemoteTransportOptions.transportSettings(settings, environment: ProcessInfo.processInfo.environment))
        }
    )

    /// `dav://` → `http://`, `davs://` → `https://`; http(s) URLs pass through.
    static func baseURL(_ text: String) -> String {
        if text.lowercased().hasPrefix("davs://") { return "https://" + text.dropFirst(7) }
        if text.lowercased().hasPrefix("dav://") { return "http://" + text.dropFirst(6) }
        return text
    }
}
