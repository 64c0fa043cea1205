/// `encryption:` on a remote: where the key comes from, whether names are encrypted too,
/// and the cipher of new files. The config reader builds it; `EncryptedBackend` uses it.
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

    /// The cipher new files are sealed with (`cipher:`); files already stored are read with
    /// whichever their header names.
    public enum Cipher: String, Sendable, CaseIterable {
        /// AES-256-GCM where this processor has AES instructions, else ChaCha20-Poly1305.
        case auto
        case aes256GCM = "aes-256-gcm"
        case chaCha20Poly1305 = "chacha20-poly1305"

        public var contentCipher: ContentCipher {
            switch self {
            case .auto: ContentCipher.fastest
            case .aes256GCM: .aes256GCM
            case .chaCha20Poly1305: .chaCha20Poly1305
            }
        }
    }

    public var key: KeySource
    public var names: Names
    public var cipher: Cipher

    public init(key: KeySource, names: Names = .encrypted, cipher: Cipher = .auto) {
        self.key = key
        self.names = names
        self.cipher = cipher
    }
}
