/// ETags as S3 sends them, with their quotes (`"9e107d9d…"`); a value sent without quotes
/// gets them, so listings and transfer answers compare equal.
///
/// On bytes, not Foundation's `trimmingCharacters`: building a `CharacterSet` per call
/// was 3% of a 2,000-file push's CPU, and listings normalize every object's ETag.
enum ETag {
    static func normalized(_ text: String) -> String {
        "\"" + bare(text) + "\""
    }

    /// The MD5 hex of a single-part upload's ETag; nil for a multipart or encrypted one.
    static func md5Hex(_ etag: String) -> String? {
        let hex = bare(etag).lowercased()
        guard hex.utf8.count == 32, hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        return hex
    }

    /// The value without surrounding blanks and quotes.
    private static func bare(_ text: String) -> String {
        let bytes = text.utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        func trimmed(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x22 }
        while start < end, trimmed(bytes[start]) { start = bytes.index(after: start) }
        while start < end, trimmed(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        return String(text[start..<end])
    }
}
