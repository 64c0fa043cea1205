/// How a backend type presents itself to Ferry: its `type:` name, the options a remote of
/// that type takes, the URL schemes it answers for ad-hoc remotes, and a factory.
public struct BackendPlugin: Sendable {
    public struct Option: Sendable {
        public enum Kind: String, Sendable {
            /// Free text.
            case string
            /// A filesystem path; relative paths are resolved against the config file's folder.
            case path
            case integer
            case boolean
            /// A URL.
            case url
        }

        public var name: String
        public var kind: Kind
        public var isRequired: Bool
        public var summary: String
        /// The only words a `string` option takes (`auto`, `off`), when it takes only some:
        /// config.yml's reader refuses any other at its line and column, which a plugin's
        /// factory cannot point at. Empty: any text.
        public var values: [String]

        public init(_ name: String, _ kind: Kind, required: Bool = false, values: [String] = [], summary: String) {
            self.name = name
            self.kind = kind
            self.isRequired = required
            self.values = values
            self.summary = summary
        }
    }

    public var type: String
    public var summary: String
    public var options: [Option]
    /// URL schemes of ad-hoc remotes (`file` for `file:///backup`).
    public var urlSchemes: [String]
    /// Whether a bare filesystem path on the command line means this backend.
    public var acceptsBarePaths: Bool
    /// Capabilities every instance has; an instance may discover more.
    public var capabilities: BackendCapabilities
    /// Whether a remote may carry keys beyond `options` (as strings): an external plugin
    /// declares its own options, which Ferry cannot know before running it.
    public var acceptsOtherOptions: Bool
    public var make: @Sendable (BackendSettings) throws(BackendError) -> any Backend

    public init(
        type: String, summary: String, options: [Option], urlSchemes: [String] = [],
        acceptsBarePaths: Bool = false, capabilities: BackendCapabilities, acceptsOtherOptions: Bool = false,
        make: @escaping @Sendable (BackendSettings) throws(BackendError) -> any Backend
    ) {
        self.type = type
        self.summary = summary
        self.options = options
        self.urlSchemes = urlSchemes
        self.acceptsBarePaths = acceptsBarePaths
        self.capabilities = capabilities
        self.acceptsOtherOptions = acceptsOtherOptions
        self.make = make
    }
}

/// The validated options of one remote, handed to a plugin's factory.
public struct BackendSettings: Sendable {
    /// The remote's name in config.yml (or the ad-hoc URL).
    public var remoteName: String
    /// Option values by name; `path` options are absolute.
    public var options: [String: String]
    /// Where the backend may keep what it learnt about its server between runs (nil: a
    /// run with no state folder, such as `ferry plugins --probe`, which always asks).
    public var memory: (any BackendMemory)?

    public init(remoteName: String, options: [String: String], memory: (any BackendMemory)? = nil) {
        self.remoteName = remoteName
        self.options = options
        self.memory = memory
    }

    public func required(_ name: String) throws(BackendError) -> String {
        guard let value = options[name], !value.isEmpty else {
            throw BackendError(.invalidName, "remote '\(remoteName)' needs the option '\(name)'")
        }
        return value
    }
}
