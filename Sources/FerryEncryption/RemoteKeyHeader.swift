import _CryptoExtras
import Crypto
import FerryPluginAPI
import Foundation

/// The small object `.ferry-encryption` in an encrypted remote's root: how the master key
/// is obtained (a key file, or scrypt over a passphrase with these parameters and salt)
/// and a key-check value, so a wrong key or passphrase is refused before anything is
/// written. It holds nothing secret. JSON; docs/encryption.md describes each field.
struct RemoteKeyHeader: Codable, Equatable {
    static let objectName = ".ferry-encryption"
    static let formatName = "ferry-encryption"
    /// Larger is refused unread: a header is a few hundred bytes.
    static let maxSize: Int64 = 4096

    enum KeyDerivation: String, Codable {
        case keyFile = "key-file"
        case scrypt
    }

    struct ScryptParameters: Codable, Equatable {
        /// N (a power of two), r and p.
        var n: Int
        var r: Int
        var p: Int
        /// 16 random bytes, hex.
        var salt: String

        /// What a new passphrase remote gets: N = 2^15, r = 8, p = 1 (32 MiB, about 0.1 s).
        static func fresh() -> ScryptParameters {
            var generator = SystemRandomNumberGenerator()
            let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            return ScryptParameters(n: 1 << 15, r: 8, p: 1, salt: Hex.encode(salt))
        }

        /// Bounds on what a header may ask for, so a hostile remote cannot make Ferry spend
        /// gigabytes or minutes: N up to 2^20, r up to 16, p up to 4.
        var isReasonable: Bool {
            n >= 2 && n <= 1 << 20 && n & (n - 1) == 0 && (1...16).contains(r) && (1...4).contains(p)
                && Hex.decode(salt).map { $0.count >= 16 && $0.count <= 64 } == true
        }

        func deriveMaster(passphrase: String) throws(BackendError) -> [UInt8] {
            do {
                return try KDF.Scrypt.deriveKey(from: Array(passphrase.utf8), salt: Hex.decode(salt) ?? [],
                                                outputByteCount: MasterKey.byteCount, rounds: n, blockSize: r, parallelism: p)
                    .withUnsafeBytes { Array($0) }
            } catch {
                throw BackendError(.io, "scrypt failed: \(error)", retryable: false)
            }
        }
    }

    var format: String
    var version: Int
    var kdf: KeyDerivation
    var scrypt: ScryptParameters?
    /// `EncryptionKeys.check`, hex.
    var keyCheck: String

    enum CodingKeys: String, CodingKey {
        case format, version, kdf, scrypt
        case keyCheck = "key_check"
    }

    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return Array((try? encoder.encode(self)) ?? Data()) + [0x0A]
    }

    static func decode(_ bytes: [UInt8]) -> RemoteKeyHeader? {
        guard let header = try? JSONDecoder().decode(RemoteKeyHeader.self, from: Data(bytes)),
              header.format == formatName else { return nil }
        return header
    }
}
