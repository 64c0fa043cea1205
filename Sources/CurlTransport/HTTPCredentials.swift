/// How to authenticate to a server. Never printed: `description` hides the secret.
public enum HTTPCredentials: Sendable, CustomStringConvertible {
    case none
    case basic(user: String, password: String)
    case digest(user: String, password: String)
    case bearer(token: String)
    /// Look the host up in ~/.netrc.
    case netrc
    /// AWS Signature Version 4, computed by libcurl (`CURLOPT_AWS_SIGV4`) for `provider`
    /// (`aws:amz:REGION:s3`). The request carries `x-amz-content-sha256` itself.
    case awsSigV4(provider: String, accessKey: String, secretKey: String)

    public var description: String {
        switch self {
        case .none: return "no credentials"
        case let .basic(user, _): return "basic auth as \(user)"
        case let .digest(user, _): return "digest auth as \(user)"
        case .bearer: return "bearer token"
        case .netrc: return "credentials from ~/.netrc"
        case let .awsSigV4(provider, accessKey, _): return "SigV4 (\(provider)) as \(accessKey)"
        }
    }
}
