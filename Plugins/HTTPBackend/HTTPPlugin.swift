import CurlTransport
import FerryPluginAPI
import Foundation

extension HTTPBackend {
    /// `type: http` in config.yml, and ad-hoc `http://` / `https://` URLs (with the
    /// defaults: listing detected, PUT, rename probed, DELETE allowed). `dav://` URLs stay
    /// WebDAV's.
    public static let plugin = BackendPlugin(
        type: "http",
        summary: "a plain HTTP file server or upload endpoint (nginx autoindex, Apache, python3 -m http.server, photo servers)",
        options: [
            .init("url", .url, required: true, summary: "the folder's URL, e.g. https://files.example.org/photos"),
            .init("listing", .string, values: HTTPRemoteOptions.Listing.allCases.map(\.rawValue), summary: "how folders are listed: auto (default), json (nginx autoindex_format json), html, or none"),
            .init("upload", .string, values: ["put", "post", "none"], summary: "put (default), post (multipart form to upload_url), or none (read-only)"),
            .init("upload_url", .url, summary: "with upload: post, the URL that takes the multipart form"),
            .init("upload_field", .string, summary: "with upload: post, the form field of the file (default file); the target path goes in the field path"),
            .init("rename", .string, values: HTTPRemoteOptions.Rename.allCases.map(\.rawValue), summary: "move (upload to a temporary name, then MOVE), none, or auto (default: probe once)"),
            .init("delete", .boolean, summary: "whether Ferry may send DELETE (default true)"),
        ] + RemoteTransportOptions.options,
        urlSchemes: ["http", "https"],
        capabilities: BackendCapabilities(rangedDownload: true, rangedRead: true),
        make: { settings throws(BackendError) in
            let url = try settings.required("url")
            let transport = try RemoteTransportOptions.transportSettings(settings, environment: ProcessInfo.processInfo.environment)
            let backend = try HTTPBackend(baseURL: url, options: try HTTPRemoteOptions(options: settings.options), settings: transport)
            PlainTextCredentials.warnIfNeeded(baseURL: url, credentials: transport.credentials, remote: settings.remoteName)
            return backend
        }
    )
}
