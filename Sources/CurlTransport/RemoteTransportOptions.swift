import FerryPluginAPI
import FerrySystem

/// The options every libcurl-based remote takes (credentials, TLS, timeouts), shared by
/// the WebDAV and HTTP plugins so that both read them the same way and say the same
/// things when they are wrong.
public enum RemoteTransportOptions {
    /// Listed in each plugin's options, after its own.
    public static let options: [BackendPlugin.Option] = [
        .init("user", .string, summary: "user name for basic or digest authentication"),
        .init("password_env", .string, summary: "name of an environment variable holding the password"),
        .init("password_file", .path, summary: "a file (mode 0600) whose first line is the password"),
        .init("token_env", .string, summary: "name of an environment variable holding a bearer token"),
        .init("auth", .string, summary: "basic (default with a user), digest, bearer, or netrc"),
        .init("ca_file", .path, summary: "a CA bundle to verify the server's certificate with"),
        .init("insecure", .boolean, summary: "skip TLS verification (warned about on every run)"),
        .init("connect_timeout", .integer, summary: "seconds to connect (default 15)"),
        .init("stall_timeout", .integer, summary: "seconds without progress before a transfer is retried (default 60)"),
    ] + downloadStreamOptions

    /// How large downloads are spread over ranged streams; the S3 plugin takes them too.
    public static let downloadStreamOptions: [BackendPlugin.Option] = [
        .init("download_streams", .integer,
              summary: "ranged streams one large download is spread over where the server takes ranges (default 4; 1: one stream)"),
        .init("multi_stream_cutoff", .string,
              summary: "files at least this large are downloaded over download_streams streams (default 64M)"),
    ]

    /// The transport settings a remote's options describe.
    public static func transportSettings(_ settings: BackendSettings, environment: [String: String]) throws(BackendError) -> CurlTransportSettings {
        var result = CurlTransportSettings()
        let options = settings.options
        if let seconds = options["connect_timeout"].flatMap(Int.init) { result.connectTimeout = max(1, seconds) }
        if let seconds = options["stall_timeout"].flatMap(Int.init) { result.stallTimeout = max(1, seconds) }
        try applyDownloadStreams(settings, to: &result)
        result.caFile = options["ca_file"]
        result.insecure = options["insecure"] == "true"
        result.credentials = try credentials(settings, environment: environment)
        return result
    }

    /// Reads `downloadStreamOptions` into `result`.
    public static func applyDownloadStreams(_ settings: BackendSettings, to result: inout CurlTransportSettings) throws(BackendError) {
        let options = settings.options
        if let text = options["download_streams"] {
            guard let streams = Int(text), (1...16).contains(streams) else {
                throw BackendError(.invalidName, "remote '\(settings.remoteName)': download_streams must be a number from 1 to 16 (got '\(text)')")
            }
            result.downloadStreams = streams
        }
        if let text = options["multi_stream_cutoff"] {
            guard let bytes = Quantity.bytes(text), bytes >= 1 << 20 else {
                throw BackendError(.invalidName, "remote '\(settings.remoteName)': multi_stream_cutoff must be a size "
                                   + "of at least 1M, such as 64M or 1G (got '\(text)')")
            }
            result.multiStreamCutoff = bytes
        }
    }

    /// The credentials a remote's options name. Secrets come from the environment or a
    /// 0600 file, never from the options themselves.
    public static func credentials(_ settings: BackendSettings, environment: [String: String]) throws(BackendError) -> HTTPCredentials {
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
    public static func readPasswordFile(_ path: String, remote: String) throws(BackendError) -> String {
        guard let meta = try BackendError.catching({ try LocalFileSystem.metadataFollowingLinks(path) }) else {
            throw BackendError(.notFound, "remote '\(remote)': password_file does not exist", path: path)
        }
        guard meta.permissions & 0o077 == 0 else {
            throw BackendError(.permissionDenied,
                               "remote '\(remote)': password_file is readable by others; run chmod 600 on it", path: path)
        }
        let bytes = try BackendError.catching { try OpenFile(path, mode: .read, followingLinks: true).readAll() }
        let text = String(decoding: bytes, as: UTF8.self)
        return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }
}
