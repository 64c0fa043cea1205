import Crypto
import Foundation

/// The SHA-256 of a bundle member's bytes, fed in pieces as they are archived or
/// extracted, as lower-case hex (the form manifests and the journal keep).
public struct MemberHash {
    private var hash = SHA256()

    public init() {}

    public mutating func update(_ bytes: some DataProtocol) {
        hash.update(data: bytes)
    }

    public func finalizeHex() -> String {
        hash.finalize().map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }

    public static func hex(of bytes: [UInt8]) -> String {
        var hash = MemberHash()
        hash.update(bytes)
        return hash.finalizeHex()
    }
}
