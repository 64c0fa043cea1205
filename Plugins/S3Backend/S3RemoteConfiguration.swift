import FerryPluginAPI
import Foundation

/// A remote's S3 settings, resolved the way the AWS CLI resolves them: the remote's own
/// options first, then the standard environment (`AWS_ACCESS_KEY_ID`, `AWS_REGION`,
/// `AWS_ENDPOINT_URL_S3`, `AWS_PROFILE`, …), then the profile in `~/.aws/credentials` and
/// `~/.aws/config`. Pure: the environment and the two files are given.
public struct S3RemoteConfiguration: Sendable, Equatable {
    public var addressing: S3Addressing
    public var region: String
    public var credentials: S3Credentials
    /// A CA bundle for a private CA (`ca_file`, else `AWS_CA_BUNDLE` for an https endpoint).
    public var caFile: String?

    /// The AWS CLI's shared files as they are on this machine.
    public struct SharedFiles: Sendable {
        public var credentials: AWSSharedConfigFile
        public var config: AWSSharedConfigFile

        public init(credentials: AWSSharedConfigFile = AWSSharedConfigFile(), config: AWSSharedConfigFile = AWSSharedConfigFile()) {
            self.credentials = credentials
            self.config = config
        }

        /// `AWS_SHARED_CREDENTIALS_FILE` / `AWS_CONFIG_FILE`, else `~/.aws/credentials` and `~/.aws/config`.
        public static func load(environment: [String: String]) -> SharedFiles {
            let home = environment["HOME"] ?? ""
            return SharedFiles(
                credentials: .load(environment["AWS_SHARED_CREDENTIALS_FILE"] ?? home + "/.aws/credentials"),
                config: .load(environment["AWS_CONFIG_FILE"] ?? home + "/.aws/config"))
        }
    }

    public init(addressing: S3Addressing, region: String, credentials: S3Credentials, caFile: String? = nil) {
        self.addressing = addressing
        self.region = region
        self.credentials = credentials
        self.caFile = caFile
    }

    /// Resolves a remote's options. `url` (`s3://BUCKET/PREFIX`, from an ad-hoc remote)
    /// stands for `bucket` and `prefix`.
    public init(settings: BackendSettings, environment: [String: String], files: SharedFiles) throws(BackendError) {
        let options = settings.options
        let remote = settings.remoteName
        var bucket = options["bucket"]
        var prefix = options["prefix"] ?? ""
        if let url = options["url"] {
            let location = try Self.parseURL(url)
            bucket = location.bucket
            prefix = location.prefix
        }
        guard let bucket, !bucket.isEmpty else {
            throw BackendError(.invalidName, "remote '\(remote)' needs the option 'bucket' (or an s3://BUCKET/PREFIX URL)")
        }

        let profileName = options["profile"] ?? Self.nonEmpty(environment["AWS_PROFILE"]) ?? "default"
        let configProfile = files.config.configProfile(profileName) ?? [:]
        if options["profile"] != nil, files.config.configProfile(profileName) == nil,
           files.credentials.credentialsProfile(profileName) == nil {
            throw BackendError(.invalidName, "remote '\(remote)': profile '\(profileName)' is in neither ~/.aws/credentials nor ~/.aws/config")
        }

        region = options["region"] ?? Self.nonEmpty(environment["AWS_REGION"]) ?? Self.nonEmpty(environment["AWS_DEFAULT_REGION"])
            ?? configProfile["region"] ?? "us-east-1"
        let configuredEndpoint = options["endpoint"] ?? Self.nonEmpty(environment["AWS_ENDPOINT_URL_S3"])
            ?? Self.nonEmpty(environment["AWS_ENDPOINT_URL"]) ?? configProfile["endpoint_url"]
        let endpoint = configuredEndpoint ?? "https://s3.\(region).amazonaws.com"
        // Path-style for any store of one's own (a bucket name is not a DNS name there);
        // virtual-host style for AWS, where path-style is deprecated.
        let virtualHost: Bool
        switch options["virtual_host"]?.lowercased() {
        case "true"?: virtualHost = true
        case "false"?: virtualHost = false
        case nil: virtualHost = configuredEndpoint == nil
        case let other?:
            throw BackendError(.invalidName, "remote '\(remote)': virtual_host must be true or false (got '\(other)')")
        }
        addressing = try S3Addressing(endpoint: endpoint, bucket: bucket, prefix: prefix, virtualHost: virtualHost)
        credentials = try Self.credentials(options: options, remote: remote, environment: environment,
                                           profileName: profileName, files: files)
        caFile = options["ca_file"] ?? (endpoint.lowercased().hasPrefix("https://") ? Self.nonEmpty(environment["AWS_CA_BUNDLE"]) : nil)
    }

    /// `s3://BUCKET/PREFIX` → bucket and prefix.
    public static func parseURL(_ url: String) throws(BackendError) -> (bucket: String, prefix: String) {
        guard url.lowercased().hasPrefix("s3://") else {
            throw BackendError(.invalidName, "not an S3 URL: '\(url)' (expected s3://BUCKET/PREFIX)")
        }
        let rest = url.dropFirst(5)
        // Keys never travel in the URL (they would show in logs, `ps` and shell history);
        // the refusal must not print the secret it refuses either.
        if let at = rest.firstIndex(of: "@"), !rest[..<at].contains("/") {
            throw BackendError(.invalidName, "'\(SecretRedaction.redactingPassword(url))' carries credentials; an S3 URL takes none: give the keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, or the remote options access_key_env and secret_key_env")
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let bucket = String(rest[..<slash])
        let prefix = slash < rest.endIndex ? String(rest[rest.index(after: slash)...]) : ""
        guard !bucket.isEmpty else { throw BackendError(.invalidName, "the URL '\(url)' names no bucket (expected s3://BUCKET/PREFIX)") }
        // A space typed in the URL arrives as %20 (the ad-hoc remote parser encodes it).
        return (bucket, prefix.replacingOccurrences(of: "%20", with: " "))
    }

    /// Keys from the options' environment variables, else `AWS_ACCESS_KEY_ID` and
    /// `AWS_SECRET_ACCESS_KEY` (unless a profile was named), else the profile.
    static func credentials(options: [String: String], remote: String, environment: [String: String],
                            profileName: String, files: SharedFiles) throws(BackendError) -> S3Credentials {
        if options["access_key_env"] != nil || options["secret_key_env"] != nil {
            guard let keyName = options["access_key_env"], let secretName = options["secret_key_env"] else {
                throw BackendError(.authenticationFailed, "remote '\(remote)': give both access_key_env and secret_key_env")
            }
            guard let key = nonEmpty(environment[keyName]) else {
                throw BackendError(.authenticationFailed, "remote '\(remote)': the environment variable \(keyName) (access_key_env) is not set")
            }
            guard let secret = nonEmpty(environment[secretName]) else {
                throw BackendError(.authenticationFailed, "remote '\(remote)': the environment variable \(secretName) (secret_key_env) is not set")
            }
            var token: String?
            if let tokenName = options["session_token_env"] {
                guard let value = nonEmpty(environment[tokenName]) else {
                    throw BackendError(.authenticationFailed, "remote '\(remote)': the environment variable \(tokenName) (session_token_env) is not set")
                }
                token = value
            }
            return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token, source: "\(keyName) and \(secretName)")
        }
        if options["profile"] == nil, let key = nonEmpty(environment["AWS_ACCESS_KEY_ID"]),
           let secret = nonEmpty(environment["AWS_SECRET_ACCESS_KEY"]) {
            return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: nonEmpty(environment["AWS_SESSION_TOKEN"]),
                                 source: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        for (section, file) in [(files.credentials.credentialsProfile(profileName), "~/.aws/credentials"),
                                (files.config.configProfile(profileName), "~/.aws/config")] {
            if let section, let key = section["aws_access_key_id"], let secret = section["aws_secret_access_key"] {
                return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: section["aws_session_token"],
                                     source: "profile \(profileName) in \(file)")
            }
        }
        throw BackendError(.authenticationFailed,
                           "remote '\(remote)' has no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                           + "access_key_env and secret_key_env, or a profile with aws_access_key_id in ~/.aws/credentials")
    }

    static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
