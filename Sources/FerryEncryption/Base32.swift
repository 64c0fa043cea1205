/// RFC 4648 base32 with the lowercase alphabet and no padding: only `a-z` and `2-7`, so an
/// encoded name is valid on every backend (local filesystems, WebDAV, S3 keys) and never
/// starts with `.` (which nginx hides from listings).
enum Base32 {
    static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 {
            output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Nil for a character outside the alphabet, a length no encoding has, or non-zero
    /// padding bits (so each byte string has exactly one encoding).
    static func decode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for character in text.utf8 {
            let value: UInt32
            switch character {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(character - UInt8(ascii: "a"))
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = UInt32(character - UInt8(ascii: "2") + 26)
            default: return nil
            }
            buffer = (buffer << 5) | value
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        guard bits < 5, buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }
}
