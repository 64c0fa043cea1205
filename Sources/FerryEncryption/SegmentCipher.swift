import Crypto
import FerryPluginAPI
import Foundation

/// One file's key and header: seals and opens its segments with the AEAD its header names
/// (`ContentCipher`, from swift-crypto; the layout is `ContentFormat`'s), bound to the
/// file's stored path where its version says so.
public struct SegmentCipher {
    public let header: [UInt8]
    public let cipher: ContentCipher
    /// Whether the segments authenticate the stored path (versions 3 and 4).
    public let bindsPath: Bool
    let noncePrefix: [UInt8]
    let key: SymmetricKey
    /// What each segment authenticates besides its bytes (`ContentFormat.associatedData`).
    let associatedData: [UInt8]

    /// A new file to be stored at `storedPath`: a random nonce prefix and salt, and the
    /// version that binds the path.
    public init(keys: EncryptionKeys, cipher: ContentCipher, storedPath: String) {
        // Eight random bytes per draw: a draw per byte was 23 `getrandom` calls per file.
        var generator = SystemRandomNumberGenerator()
        var random: [UInt8] = []
        while random.count < ContentFormat.noncePrefixSize + ContentFormat.saltSize {
            withUnsafeBytes(of: generator.next() as UInt64) { random.append(contentsOf: $0) }
        }
        let prefix = Array(random[0..<ContentFormat.noncePrefixSize])
        let salt = Array(random[ContentFormat.noncePrefixSize..<(ContentFormat.noncePrefixSize + ContentFormat.saltSize)])
        self.init(keys: keys, cipher: cipher, noncePrefix: prefix, salt: salt, storedPath: storedPath)
    }

    /// A file with a given prefix and salt (test vectors, and files written the old way):
    /// bound to `storedPath`, or with nil of the version before paths were bound (1 or 2).
    public init(keys: EncryptionKeys, cipher: ContentCipher, noncePrefix: [UInt8], salt: [UInt8], storedPath: String?) {
        let version = ContentFormat.Version(cipher: cipher, bindsPath: storedPath != nil)
        self.cipher = cipher
        self.bindsPath = version.bindsPath
        self.noncePrefix = noncePrefix
        header = ContentFormat.header(version: version, noncePrefix: noncePrefix, salt: salt)
        associatedData = ContentFormat.associatedData(header: header, storedPath: storedPath ?? "")
        key = keys.fileKey(salt: salt)
    }

    /// An existing file stored at `storedPath`, from its first 32 bytes; nil when they are
    /// not a header of this format, or name a version this build does not know. A file of
    /// version 1 or 2 authenticates its header only, as it was written.
    public init?(keys: EncryptionKeys, header: [UInt8], storedPath: String) {
        guard let version = ContentFormat.version(ofHeader: header) else { return nil }
        let prefixStart = ContentFormat.magic.count + 1
        let saltStart = prefixStart + ContentFormat.noncePrefixSize
        self.init(keys: keys, cipher: version.cipher, noncePrefix: Array(header[prefixStart..<saltStart]),
                  salt: Array(header[saltStart..<ContentFormat.headerSize]), storedPath: version.bindsPath ? storedPath : nil)
    }

    /// Ciphertext ‖ tag of segment `index`: a slice of the sealed box (its indices start
    /// after the box's nonce), since joining `ciphertext` and `tag` copied every segment
    /// once more.
    public func seal(_ plaintext: some DataProtocol, index: UInt32, isLast: Bool) throws(BackendError) -> Data {
        do {
            let nonce = ContentFormat.nonce(prefix: noncePrefix, index: index, isLast: isLast)
            switch cipher {
            case .chaCha20Poly1305:
                let box = try ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: associatedData)
                return box.combined.dropFirst(nonce.count)
            case .aes256GCM:
                // A 12-byte nonce always gives a combined form.
                let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(data: nonce), authenticating: associatedData)
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
                return try ChaChaPoly.open(box, using: key, authenticating: associatedData)
            case .aes256GCM:
                let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
                return try AES.GCM.open(box, using: key, authenticating: associatedData)
            }
        } catch {
            throw EncryptionFailure.authentication(bindsPath
                ? "segment \(index) does not authenticate under this name: changed, or moved here from another name"
                : "segment \(index) does not authenticate", path: path)
        }
    }
}
