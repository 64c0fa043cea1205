import FerryPluginAPI

/// Builds request URLs for paths under a remote's root folder on an HTTP server: every
/// component percent-encoded (only RFC 3986 unreserved characters stay as they are),
/// folders with a trailing slash. Shared by the WebDAV and HTTP backends.
public struct ServerURL: Sendable, Equatable {
    /// `scheme://host[:port]`, scheme lower-cased, no trailing slash.
    public let origin: String
    /// The root's path, percent-encoded, starting and ending with `/`.
    public let rootPath: String

    /// Splits a base URL such as `http://127.0.0.1:8080/dav/photos`.
    public init(base: String) throws(BackendError) {
        guard let schemeEnd = base.range(of: "://") else {
            throw BackendError(.invalidName, "not a URL: '\(SecretRedaction.redactingPassword(base))' (expected http://host/path or https://…)")
        }
        let scheme = base[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw BackendError(.invalidName, "unsupported URL scheme '\(scheme)' (expected http or https)")
        }
        let rest = base[schemeEnd.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        guard !authority.isEmpty else {
            throw BackendError(.invalidName, "the URL '\(SecretRedaction.redactingPassword(base))' has no host")
        }
        guard !authority.contains("@") else {
            throw BackendError(.invalidName, "put credentials in the remote's user and password_env options, not in the URL")
        }
        origin = scheme + "://" + authority
        var path = String(rest[slash...])
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<query]) }
        if !path.hasPrefix("/") { path = "/" + path }
        if !path.hasSuffix("/") { path += "/" }
        rootPath = path
    }

    /// The URL path (percent-encoded) of a file or folder below the root.
    public func path(_ remote: RelativePath, isFolder: Bool) -> String {
        if remote.isRoot { return rootPath }
        let encoded = remote.components.map(PercentEncoding.encode).joined(separator: "/")
        return rootPath + encoded + (isFolder ? "/" : "")
    }

    public func url(_ remote: RelativePath, isFolder: Bool) -> String {
        origin + path(remote, isFolder: isFolder)
    }
}
