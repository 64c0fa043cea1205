import _CryptoExtras
import Crypto
import FerryPluginAPI
import Foundation

/// Path components, encrypted one by one with AES-GCM-SIV under the names key and one
/// fixed nonce (derived from the master key): the same name always gives the same stored
/// name, so listings, renames and no-op pushes work without reading any file, and a
/// stored name that was altered fails to authenticate. The sealed bytes (ciphertext ‖
/// tag) are base32-encoded (`Base32`).
public struct NameCipher: Sendable {
    /// Longest stored name: what local filesystems, WebDAV servers and S3 all take.
    public static let maxStoredLength = 255
    /// Longest plaintext name: 255 base32 characters hold 159 bytes, less the 16-byte tag.
    public static let maxNameBytes = maxStoredLength * 5 / 8 - 16

    let keys: EncryptionKeys

    public init(keys: EncryptionKeys) {
        self.keys = keys
    }

    public func encrypt(_ name: String) throws(BackendError) -> String {
        let bytes = Array(name.utf8)
        guard bytes.count <= Self.maxNameBytes else {
            throw BackendError(.invalidName, "the name is too long for an encrypted remote: \(bytes.count) bytes, "
                + "at most \(Self.maxNameBytes) with names: encrypted (names: plain has no such limit)", path: name)
        }
        do {
            let box = try AES.GCM._SIV.seal(bytes, using: keys.names, nonce: try AES.GCM._SIV.Nonce(data: keys.nameNonce))
            return Base32.encode(Array(box.ciphertext + box.tag))
        } catch {
            throw BackendError(.io, "cannot encrypt a name: \(error)", path: name, retryable: false)
        }
    }

    /// The plaintext of a stored name, or nil when it is not one this key sealed.
    public func decrypt(_ stored: String) -> String? {
        guard let sealed = Base32.decode(stored), sealed.count >= 16,
              let nonce = try? AES.GCM._SIV.Nonce(data: keys.nameNonce),
              let box = try? AES.GCM._SIV.SealedBox(nonce: nonce, ciphertext: sealed.dropLast(16), tag: sealed.suffix(16)),
              let plain = try? AES.GCM._SIV.open(box, using: keys.names),
              let name = String(validating: plain, as: UTF8.self) else { return nil }
        return name
    }
}
