import FerryPluginAPI

/// Builds request URLs for paths under a WebDAV root: every component percent-encoded
/// (only RFC 3986 unreserved characters stay as they are), folders with a trailing slash.
struct WebDAVURL: Sendable {
    /// `scheme://host[:port]`, no trailing slash.
    let origin: String
    /// The root's path, percent-encoded, starting and ending with `/`.
    let rootPath: String

    /// Splits a base URL such as `http://127.0.0.1:8080/dav/photos`.
    init(base: String) throws(BackendError) {
        guard let schemeEnd = base.range(of: "://") else {
            throw BackendError(.invalidName, "not a URL: '\(base)' (expected http://host/path or https://…)")
        }
        let scheme = base[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw BackendError(.invalidName, "unsupported URL scheme '\(scheme)' (expected http or https)")
        }
        let rest = base[schemeEnd.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        guard !authority.isEmpty else { throw BackendError(.invalidName, "the URL '\(base)' has no host") }
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
    func path(_ remote: RemotePath, isFolder: Bool) -> String {
        if remote.isRoot { return rootPath }
        let encoded = remote.components.map(Self.encode).joined(separator: "/")
        return rootPath + encoded + (isFolder ? "/" : "")
    }

    func url(_ remote: RemotePath, isFolder: Bool) -> String {
        origin + path(remote, isFolder: isFolder)
    }

    static func encode(_ component: String) -> String {
        var result = ""
        for byte in component.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }
}
