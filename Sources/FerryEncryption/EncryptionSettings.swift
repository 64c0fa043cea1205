/// `encryption:` on a remote: where the key comes from, and whether names are encrypted
/// too. The config reader builds it; `EncryptedBackend` uses it.
public struct EncryptionSettings: Sendable, Equatable {
    /// Where the remote's master key comes from.
    public enum KeySource: Sendable, Equatable {
        /// A file of mode 0600 written by `ferry keygen PATH` (absolute path).
        case keyFile(String)
        /// A passphrase in this environment variable, stretched with scrypt; the scrypt
        /// parameters and salt are in the remote's header object.
        case passphraseEnvironment(String)
    }

    /// How path components are stored on the remote.
    public enum Names: String, Sendable, CaseIterable {
        /// Each component encrypted (AES-GCM-SIV) and base32-encoded.
        case encrypted
        /// Components as they are; only contents are encrypted.
        case plain
    }

    public var key: KeySource
    public var names: Names

    public init(key: KeySource, names: Names = .encrypted) {
        self.key = key
        self.names = names
    }
}
