import FerryPluginAPI

/// What an HTTP remote's server can do, as its options in config.yml say (an ad-hoc
/// `http://` URL gets the defaults: detected listing, PUT, rename probed, DELETE).
public struct HTTPRemoteOptions: Sendable, Equatable {
    /// How folders are listed.
    public enum Listing: String, Sendable, CaseIterable {
        /// JSON or HTML, from each answer's `Content-Type` (else its first character).
        case auto
        /// nginx `autoindex_format json`.
        case json
        /// An HTML directory page (Apache, nginx, `python3 -m http.server`).
        case html
        /// The server has no index; listing a folder is an `unsupported` error.
        case none
    }

    /// How files are sent.
    public enum Upload: Sendable, Equatable {
        /// `PUT` to the file's URL.
        case put
        /// `POST multipart/form-data` to `endpoint`, the file in the form field `field` and
        /// its path on the server in the form field `path`.
        case post(endpoint: String, field: String)
        /// Read-only: uploads, deletes, renames and new folders are refused.
        case none
    }

    /// Whether an upload goes to a temporary name first and is renamed with `MOVE`.
    public enum Rename: String, Sendable, CaseIterable {
        /// Probe once, at the first upload, whether `MOVE` works.
        case auto
        /// The server supports `MOVE` (nginx `dav_methods … MOVE`, any WebDAV server).
        case move
        /// It does not: files are sent to their final name directly.
        case none
    }

    public var listing: Listing
    public var upload: Upload
    public var rename: Rename
    /// Whether `DELETE` may be sent (`delete: false` keeps a remote's files whatever the core plans).
    public var allowsDelete: Bool

    public init(listing: Listing = .auto, upload: Upload = .put, rename: Rename = .auto, allowsDelete: Bool = true) {
        self.listing = listing
        self.upload = upload
        self.rename = rename
        self.allowsDelete = allowsDelete
    }

    /// Reads the options of one remote; a wrong value is an `invalidName` error saying
    /// which values the option takes.
    public init(options: [String: String]) throws(BackendError) {
        func choice<Value: RawRepresentable<String> & CaseIterable>(_ name: String, default value: Value) throws(BackendError) -> Value {
            guard let text = options[name] else { return value }
            guard let parsed = Value(rawValue: text.lowercased()) else {
                let allowed = Value.allCases.map(\.rawValue).joined(separator: ", ")
                throw BackendError(.invalidName, "\(name) must be one of \(allowed), not '\(text)'")
            }
            return parsed
        }
        listing = try choice("listing", default: Listing.auto)
        rename = try choice("rename", default: Rename.auto)

        switch options["delete"]?.lowercased() {
        case nil, "true": allowsDelete = true
        case "false": allowsDelete = false
        case let other?: throw BackendError(.invalidName, "delete must be true or false, not '\(other)'")
        }

        let endpoint = options["upload_url"]
        let field = options["upload_field"]
        switch options["upload"]?.lowercased() {
        case nil, "put", "none":
            guard endpoint == nil, field == nil else {
                throw BackendError(.invalidName, "upload_url and upload_field only apply to upload: post")
            }
            upload = options["upload"]?.lowercased() == "none" ? .none : .put
        case "post":
            guard let endpoint, !endpoint.isEmpty else {
                throw BackendError(.invalidName, "upload: post needs upload_url, the URL that takes the multipart form")
            }
            try Self.checkEndpoint(endpoint)
            let name = field ?? "file"
            guard !name.isEmpty else { throw BackendError(.invalidName, "upload_field must not be empty") }
            upload = .post(endpoint: endpoint, field: name)
        case let other?:
            throw BackendError(.invalidName, "upload must be one of put, post, none, not '\(other)'")
        }
    }

    /// An upload endpoint is an http(s) URL with a host and no credentials in it.
    private static func checkEndpoint(_ endpoint: String) throws(BackendError) {
        let lowered = endpoint.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            throw BackendError(.invalidName, "upload_url must be an http:// or https:// URL, not '\(endpoint)'")
        }
        let rest = endpoint.drop { $0 != "/" }.dropFirst(2)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty else { throw BackendError(.invalidName, "upload_url '\(endpoint)' has no host") }
        guard !authority.contains("@") else {
            throw BackendError(.invalidName, "put credentials in the remote's user and password_env options, not in upload_url")
        }
    }
}
