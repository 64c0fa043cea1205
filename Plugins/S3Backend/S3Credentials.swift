/// An access key pair (and an STS session token) for SigV4. Never printed: `description`
/// names the key id and where it came from, never the secret or the token.
public struct S3Credentials: Sendable, Equatable, CustomStringConvertible {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String?
    /// Where the keys were found (`AWS_ACCESS_KEY_ID`, `profile photos in ~/.aws/credentials`, …).
    public var source: String

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, source: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.source = source
    }

    public var description: String { "access key \(accessKeyID) from \(source)" }
}
