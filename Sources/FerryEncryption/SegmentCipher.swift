import Crypto
import FerryPluginAPI
import Foundation

/// One file's key and header: seals and opens its segments with the AEAD its header names
/// (`ContentCipher`, from swift-crypto; the layout is `ContentFormat`'s).
public struct SegmentCipher {
    public let header: [UInt8]
    public let cipher: ContentCipher
    let noncePrefix: [UInt8]
    let key: SymmetricKey

    /// A new file: a random nonce prefix and salt.
    public init(keys: EncryptionKeys, cipher: ContentCipher) {
        // Eight random bytes per draw: a draw per byte was 23 `getrandom` calls per file.
        var generator = SystemRandomNumberGenerator()
        var random: [UInt8] = []
        while random.count < ContentFormat.noncePrefixSize + ContentFormat.saltSize {
            withUnsafeBytes(of: generator.next() as UInt64) { random.append(contentsOf: $0) }
        }
        let prefix = Array(random[0..<ContentFormat.noncePrefixSize])
        let salt = Array(random[ContentFormat.noncePrefixSize..<(ContentFormat.noncePrefixSize + ContentFormat.saltSize)])
        self.init(keys: keys, cipher: cipher, noncePrefix: prefix, salt: salt)
    }

    /// A file with a given prefix and salt (test vectors).
    public init(keys: EncryptionKeys, cipher: ContentCipher, noncePrefix: [UInt8], salt: [UInt8]) {
        self.cipher = cipher
        self.noncePrefix = noncePrefix
        self.header = ContentFormat.header(cipher: cipher, noncePrefix: noncePrefix, salt: salt)
        self.key = keys.fileKey(salt: salt)
    }

    /// An existing file, from its first 32 bytes; nil when they are not a header of this
    /// format, or name a version this build does not know.
    public init?(keys: EncryptionKeys, header: [UInt8]) {
        guard let cipher = ContentFormat.cipher(ofHeader: header) else { return nil }
        let prefixStart = ContentFormat.magic.count + 1
        let saltStart = prefixStart + ContentFormat.noncePrefixSize
        self.init(keys: keys, cipher: cipher, noncePrefix: Array(header[prefixStart..<saltStart]),
                  salt: Array(header[saltStart..<ContentFormat.headerSize]))
    }

    /// Ciphertext ‖ tag of segment `index`: a slice of the sealed box (its indices start
    /// after the box's nonce), since joining `ciphertext` and `tag` copied every segment
    /// once more.
    public func seal(_ plaintext: some DataProtocol, index: UInt32, isLast: Bool) throws(BackendError) -> Data {
        do {
            let nonce = ContentFormat.nonce(prefix: noncePrefix, index: index, isLast: isLast)
            switch cipher {
            case .chaCha20Poly1305:
                let box = try ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: header)
                return box.combined.dropFirst(nonce.count)
            case .aes256GCM:
                // A 12-byte nonce always gives a combined form.
                let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(data: nonce), authenticating: header)
                guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
                return combined.dropFirst(nonce.count)
            }
        } catch {
            throw BackendError(.io, "cannot encrypt: \(error)", retryable: false)
        }
    }

    /// The plaintext of segment `index` (`sealed` is ciphertext ‖ tag); throws
    /// "authentication failed" when the segment is not exactly what was sealed there.
    public func open(_ sealed: Data, index: UInt32, isLast: Bool, path: String? = nil) throws(BackendError) -> Data {
        do {
            guard sealed.count >= ContentFormat.tagSize else { throw CryptoKitError.authenticationFailure }
            let nonce = ContentFormat.nonce(prefix: noncePrefix, index: index, isLast: isLast)
            let ciphertext = sealed.dropLast(ContentFormat.tagSize), tag = sealed.suffix(ContentFormat.tagSize)
            switch cipher {
            case .chaCha20Poly1305:
                let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
                return try ChaChaPoly.open(box, using: key, authenticating: header)
            case .aes256GCM:
                let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
                return try AES.GCM.open(box, using: key, authenticating: header)
            }
        } catch {
            throw EncryptionFailure.authentication("segment \(index) does not authenticate", path: path)
        }
    }
}
