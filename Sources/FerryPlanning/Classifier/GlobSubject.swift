/// A relative path made ready for matching, once for all the patterns tried on it:
/// lower-cased and split into components.
///
/// Nearly every path in a photo library is plain ASCII; those are matched byte by byte,
/// which made the queue classifier and the ignore rules five times cheaper than splitting
/// every path into `Character`s (together a fifth of a no-op push's CPU). Any other path is
/// matched on `Character`s, so `?` stays one user-perceived character.
struct GlobSubject {
    enum Form {
        /// The lower-cased bytes and each non-empty component's range.
        case bytes([UInt8], components: [Range<Int>])
        /// The lower-cased components as characters.
        case characters([[Character]])
    }

    let form: Form

    init(_ relativePath: String) {
        form = Self.bytesForm(relativePath) ?? Self.charactersForm(relativePath)
    }

    /// The character form whatever the path (tests compare both matchers with it).
    init(characters relativePath: String) {
        form = Self.charactersForm(relativePath)
    }

    private static func bytesForm(_ relativePath: String) -> Form? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(relativePath.utf8.count)
        var components: [Range<Int>] = []
        var start = 0
        for byte in relativePath.utf8 {
            // Control characters stay on the character path: "\r\n" is one `Character`.
            guard byte < 0x80, byte >= 0x20 else { return nil }
            if byte == UInt8(ascii: "/") {
                if start < bytes.count { components.append(start..<bytes.count) }
                start = bytes.count + 1
            }
            bytes.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 0x20 : byte)
        }
        if start < bytes.count { components.append(start..<bytes.count) }
        return .bytes(bytes, components: components)
    }

    private static func charactersForm(_ relativePath: String) -> Form {
        .characters(relativePath.lowercased().split(separator: "/", omittingEmptySubsequences: true).map { Array($0) })
    }
}
