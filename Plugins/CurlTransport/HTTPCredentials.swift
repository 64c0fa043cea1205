/// How to authenticate to a server. Never printed: `description` hides the secret.
public enum HTTPCredentials: Sendable, CustomStringConvertible {
    case none
    case basic(user: String, password: String)
    case digest(user: String, password: String)
    case bearer(token: String)
    /// Look the host up in ~/.netrc.
    case netrc

    public var description: String {
        switch self {
        case .none: return "no credentials"
        case let .basic(user, _): return "basic auth as \(user)"
        case let .digest(user, _): return "digest auth as \(user)"
        case .bearer: return "bearer token"
        case .netrc: return "credentials from ~/.netrc"
        }
    }
}
