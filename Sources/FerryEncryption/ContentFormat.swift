/// The layout of an encrypted file (docs/encryption.md, byte by byte):
///
/// ```
/// header (32 bytes): "FERRYENC" | version | nonce prefix (7 bytes) | file salt (16 bytes)
/// segment 0 … n-1:   AEAD(plaintext segment) | tag (16 bytes)
/// ```
///
/// The version names the AEAD (`ContentCipher`) and what a segment authenticates: 0x01
/// ChaCha20-Poly1305 and 0x02 AES-256-GCM with the header only (files written before
/// paths were bound, still read); 0x03 ChaCha20-Poly1305 and 0x04 AES-256-GCM with the
/// header and the file's stored path (what Ferry writes now). The layout is the same for all.
///
/// Every segment but the last holds 65,536 plaintext bytes; the last holds 1 to 65,536
/// (0 only for an empty file, which is one empty last segment). A segment's nonce is
/// prefix (7) ‖ counter (4, big-endian) ‖ last-segment flag (1: 0x01 last, 0x00 not), and
/// its associated data is the 32-byte header, followed (0x03, 0x04) by the file's stored
/// path in UTF-8: a segment moved, dropped, cut short, taken from another file, combined
/// with another header, or a whole file put under another name fails to authenticate.
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

    /// What a version byte says: the cipher, and whether segments authenticate the stored path.
    public struct Version: Sendable, Equatable {
        public var cipher: ContentCipher
        public var bindsPath: Bool

        public init(cipher: ContentCipher, bindsPath: Bool) {
            self.cipher = cipher
            self.bindsPath = bindsPath
        }

        /// 0x01, 0x02: the cipher's own number; 0x03, 0x04: the same plus 2, path bound.
        public var byte: UInt8 { cipher.rawValue + (bindsPath ? 2 : 0) }

        public init?(byte: UInt8) {
            guard let cipher = ContentCipher(rawValue: byte > 2 ? byte - 2 : byte) else { return nil }
            self.init(cipher: cipher, bindsPath: byte > 2)
        }
    }

    /// The header of a file: magic, version, nonce prefix, salt.
    public static func header(version: Version, noncePrefix: [UInt8], salt: [UInt8]) -> [UInt8] {
        precondition(noncePrefix.count == noncePrefixSize && salt.count == saltSize)
        return magic + [version.byte] + noncePrefix + salt
    }

    /// The version that `header` names, or nil when it is no header of this format or names
    /// a version this build does not know.
    public static func version(ofHeader header: [UInt8]) -> Version? {
        guard header.count == headerSize, Array(header.prefix(magic.count)) == magic else { return nil }
        return Version(byte: header[magic.count])
    }

    /// The cipher that `header` names (`version(ofHeader:)`).
    public static func cipher(ofHeader header: [UInt8]) -> ContentCipher? {
        version(ofHeader: header)?.cipher
    }

    /// What every segment of a file authenticates besides its own bytes: the header, and
    /// where the version binds it, the stored path (relative to the encrypted remote's root,
    /// components joined by `/`). The header has a fixed size, so the two cannot run together.
    public static func associatedData(header: [UInt8], storedPath: String) -> [UInt8] {
        guard let version = version(ofHeader: header), version.bindsPath else { return header }
        return header + Array(storedPath.utf8)
    }

    /// The nonce of segment `index`.
    public static func nonce(prefix: [UInt8], index: UInt32, isLast: Bool) -> [UInt8] {
        prefix + [UInt8(index >> 24), UInt8(index >> 16 & 0xFF), UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF)]
            + [isLast ? 1 : 0]
    }
}
