import Crypto
import Foundation

/// The keys of one encrypted remote, all derived from its 32-byte master key with
/// HKDF-SHA256 (no salt, a distinct `info` each; docs/encryption.md):
///
/// - `content`: the input to each file's key (`fileKey(salt:)`);
/// - `names`: the AES-GCM-SIV key for path components, with the fixed `nameNonce`;
/// - `check`: stored in the remote's header object, so a wrong key is told apart from a
///   damaged file before anything is written.
public struct EncryptionKeys: Sendable {
    /// Raw bytes: `SymmetricKey` is not `Sendable`, and the keys cross into blocking threads.
    let contentBytes: [UInt8]
    let namesBytes: [UInt8]
    public let nameNonce: [UInt8]
    public let check: [UInt8]

    public var content: SymmetricKey { SymmetricKey(data: contentBytes) }
    public var names: SymmetricKey { SymmetricKey(data: namesBytes) }

    public static let contentInfo = "ferry-encryption v1 content"
    public static let namesInfo = "ferry-encryption v1 names"
    public static let nameNonceInfo = "ferry-encryption v1 name nonce"
    public static let checkInfo = "ferry-encryption v1 key check"
    public static let fileInfo = "ferry-encryption v1 file"

    public init(master: [UInt8]) {
        let key = SymmetricKey(data: master)
        func derive(_ info: String, _ count: Int) -> [UInt8] {
            HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data(info.utf8), outputByteCount: count)
                .withUnsafeBytes { Array($0) }
        }
        contentBytes = derive(Self.contentInfo, 32)
        namesBytes = derive(Self.namesInfo, 32)
        nameNonce = derive(Self.nameNonceInfo, 12)
        check = derive(Self.checkInfo, 32)
    }

    /// One file's content key (for either `ContentCipher`): HKDF-SHA256 of the content key with the file's
    /// random 16-byte salt (from its header) as the salt.
    public func fileKey(salt: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: content, salt: salt, info: Data(Self.fileInfo.utf8), outputByteCount: 32)
    }
}
