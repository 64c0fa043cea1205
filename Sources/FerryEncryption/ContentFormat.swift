/// The layout of an encrypted file (docs/encryption.md, byte by byte):
///
/// ```
/// header (32 bytes): "FERRYENC" | version | nonce prefix (7 bytes) | file salt (16 bytes)
/// segment 0 … n-1:   AEAD(plaintext segment) | tag (16 bytes)
/// ```
///
/// The version names the AEAD (`ContentCipher`): 0x01 ChaCha20-Poly1305, 0x02 AES-256-GCM;
/// the layout is the same for both.
///
/// Every segment but the last holds 65,536 plaintext bytes; the last holds 1 to 65,536
/// (0 only for an empty file, which is one empty last segment). A segment's nonce is
/// prefix (7) ‖ counter (4, big-endian) ‖ last-segment flag (1: 0x01 last, 0x00 not), and
/// its associated data is the 32-byte header: a segment moved, dropped, cut short, taken
/// from another file or combined with another header fails to authenticate.
public enum ContentFormat {
    public static let magic = Array("FERRYENC".utf8)
    public static let noncePrefixSize = 7
    public static let saltSize = 16
    public static let headerSize = 32
    public static let segmentSize = 65_536
    public static let tagSize = 16

    /// Segments of a plaintext of `size` bytes (an empty file has one, empty).
    public static func segmentCount(plaintextSize size: Int64) -> Int64 {
        size == 0 ? 1 : (size + Int64(segmentSize) - 1) / Int64(segmentSize)
    }

    /// The stored size of a plaintext of `size` bytes.
    public static func ciphertextSize(plaintextSize size: Int64) -> Int64 {
        Int64(headerSize) + size + Int64(tagSize) * segmentCount(plaintextSize: size)
    }

    /// The plaintext size of a stored file of `size` bytes, or nil when no plaintext
    /// encrypts to that size (not a file of this format, or cut short).
    public static func plaintextSize(ciphertextSize size: Int64) -> Int64? {
        let body = size - Int64(headerSize)
        guard body >= Int64(tagSize) else { return nil }
        let stride = Int64(segmentSize + tagSize)
        let segments = (body + stride - 1) / stride
        let plaintext = body - segments * Int64(tagSize)
        guard plaintext >= 0, ciphertextSize(plaintextSize: plaintext) == size else { return nil }
        return plaintext
    }

    /// The plaintext bytes before a point in the stored file (a tag counts for nothing).
    public static func plaintextOffset(storedOffset offset: Int64) -> Int64 {
        let body = max(0, offset - Int64(headerSize))
        let stride = Int64(segmentSize + tagSize)
        return body / stride * Int64(segmentSize) + min(body % stride, Int64(segmentSize))
    }

    /// The header of a file: magic, version (its cipher), nonce prefix, salt.
    public static func header(cipher: ContentCipher, noncePrefix: [UInt8], salt: [UInt8]) -> [UInt8] {
        precondition(noncePrefix.count == noncePrefixSize && salt.count == saltSize)
        return magic + [cipher.rawValue] + noncePrefix + salt
    }

    /// The cipher that `header` names, or nil when it is no header of this format or names
    /// a version this build does not know.
    public static func cipher(ofHeader header: [UInt8]) -> ContentCipher? {
        guard header.count == headerSize, Array(header.prefix(magic.count)) == magic else { return nil }
        return ContentCipher(rawValue: header[magic.count])
    }

    /// The nonce of segment `index`.
    public static func nonce(prefix: [UInt8], index: UInt32, isLast: Bool) -> [UInt8] {
        prefix + [UInt8(index >> 24), UInt8(index >> 16 & 0xFF), UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF)]
            + [isLast ? 1 : 0]
    }
}
