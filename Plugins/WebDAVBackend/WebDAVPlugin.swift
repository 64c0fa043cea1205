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
            .init("user", .string, summary: "user name for basic or digest authentication"),
            .init("password_env", .string, summary: "name of an environment variable holding the password"),
            .init("password_file", .path, summary: "a file (mode 0600) whose first line is the password"),
            .init("token_env", .string, summary: "name of an environment variable holding a bearer token"),
            .init("auth", .string, summary: "basic (default with a user), digest, bearer, or netrc"),
            .init("ca_file", .path, summary: "a CA bundle to verify the server's certificate with"),
            .init("insecure", .boolean, summary: "skip TLS verification (warned about on every run)"),
            .init("connect_timeout", .integer, summary: "seconds to connect (default 15)"),
            .init("stall_timeout", .integer, summary: "seconds without progress before a transfer is retried (default 60)"),
            .init("upload_chunk_size", .string,
                  summary: "where the server honours ranged PUT, send larger files in parts of this size, "
                      + "so an interruption loses at most one part (default 64M; 0: one PUT per file)"),
            .init("keep_mtime", .boolean,
                  summary: "on servers that ignore X-OC-Mtime but store WebDAV properties (Apache), keep each file's "
                      + "modification time in a property: one PROPPATCH per upload (default true)"),
        ],
        urlSchemes: ["dav", "davs"],
        // Per server, the probe adds resumable-upload (verified ranged PUT) and mtime
        // (X-OC-Mtime or Ferry's dead property): see `ferry plugins --probe`.
        capabilities: BackendCapabilities(rangedDownload: true, serverSideMove: true, atomicUpload: true, serverSideCopy: true),
        make: { settings throws(BackendError) in
            try WebDAVBackend(baseURL: try baseURL(settings.required("url")),
                              settings: try transportSettings(settings, environment: ProcessInfo.processInfo.environment),
                              uploadChunkSize: try uploadChunkSize(settings),
                              writesModificationTimeProperty: settings.options["keep_mtime"] != "false")
        }
    )

    static func uploadChunkSize(_ settings: BackendSettings) throws(BackendError) -> Int64 {
        guard let text = settings.options["upload_chunk_size"] else { return defaultUploadChunkSize }
        guard let bytes = byteCount(text), bytes == 0 || bytes >= 1 << 20 else {
            throw BackendError(.invalidName, "remote '\(settings.remoteName)': upload_chunk_size must be 0 or a size "
                               + "of at least 1M, such as 64M or 1G (got '\(text)')")
        }
        return bytes
    }

    /// Bytes from `123`, `64k`, `64M`, `1G` (powers of 1024; `KiB`, `MB`, … accepted too).
    static func byteCount(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 9, let number = Int64(digits) else { return nil }
        let shift: Int64
        switch trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces) {
        case "", "b": shift = 0
        case "k", "kb", "kib": shift = 10
        case "m", "mb", "mib": shift = 20
        case "g", "gb", "gib": shift = 30
        default: return nil
        }
        return number << shift
    }

    /// `dav://` → `http://`, `davs://` → `https://`; http(s) URLs pass through.
    static func baseURL(_ text: String) -> String {
        if text.lowercased().hasPrefix("davs://") { return "https://" + text.dropFirst(7) }
        if text.lowercased().hasPrefix("dav://") { return "http://" + text.dropFirst(6) }
        return text
    }

    static func transportSettings(_ settings: BackendSettings, environment: [String: String]) throws(BackendError) -> CurlTransportSettings {
        var result = CurlTransportSettings()
        let options = settings.options
        if let seconds = options["connect_timeout"].flatMap(Int.init) { result.connectTimeout = max(1, seconds) }
        if let seconds = options["stall_timeout"].flatMap(Int.init) { result.stallTimeout = max(1, seconds) }
        result.caFile = options["ca_file"]
        result.insecure = options["insecure"] == "true"
        result.credentials = try credentials(settings, environment: environment)
        return result
    }

    static func credentials(_ settings: BackendSettings, environment: [String: String]) throws(BackendError) -> HTTPCredentials {
        let options = settings.options
        let remote = settings.remoteName
        let auth = options["auth"]?.lowercased()
        if auth == "netrc" { return .netrc }
        if auth == "bearer" || options["token_env"] != nil {
            guard let name = options["token_env"], let token = environment[name], !token.isEmpty else {
                throw BackendError(.authenticationFailed, "remote '\(remote)': set token_env to an environment variable that holds the token")
            }
            return .bearer(token: token)
        }
        guard let user = options["user"] else {
            if options["password_env"] != nil || options["password_file"] != nil {
                throw BackendError(.authenticationFailed, "remote '\(remote)': a password needs a user")
            }
            return .none
        }
        let password: String
        if let name = options["password_env"] {
            guard let value = environment[name] else {
                throw BackendError(.authenticationFailed, "remote '\(remote)': the environment variable \(name) (password_env) is not set")
            }
            password = value
        } else if let file = options["password_file"] {
            password = try readPasswordFile(file, remote: remote)
        } else {
            throw BackendError(.authenticationFailed, "remote '\(remote)': give password_env or password_file for user \(user)")
        }
        switch auth {
        case nil, "basic": return .basic(user: user, password: password)
        case "digest": return .digest(user: user, password: password)
        default:
            throw BackendError(.invalidName, "remote '\(remote)': unknown auth '\(auth ?? "")' (expected basic, digest, bearer or netrc)")
        }
    }

    /// The first line of a password file that only its owner can read.
    static func readPasswordFile(_ path: String, remote: String) throws(BackendError) -> String {
        guard let meta = try LocalFileSystem.metadataFollowingLinks(path) else {
            throw BackendError(.notFound, "remote '\(remote)': password_file does not exist", path: path)
        }
        guard meta.permissions & 0o077 == 0 else {
            throw BackendError(.permissionDenied,
                               "remote '\(remote)': password_file is readable by others; run chmod 600 on it", path: path)
        }
        let bytes = try OpenFile(path, mode: .read).readAll()
        let text = String(decoding: bytes, as: UTF8.self)
        return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }
}
