/// What a file name needs for one name-only glob alternative (`*.part`, `Thumbs.db`) to
/// match it: its first and last character, when the glob names them, and a least length.
/// Checked on the name's bytes before the name is prepared for matching (`GlobSubject`), it
/// turns away nearly every name in a scan: the built-in ignores all start or end with a
/// literal, and photos rarely share it. Building the subject for every scanned file was a
/// fortieth of a no-op push's CPU.
///
/// The checks are necessary conditions for both matchers: an ASCII byte starts (or ends)
/// the first (or last) character; a byte outside printable ASCII leaves the name to the
/// full matcher; every token but `*` takes at least one byte.
struct GlobNameFilter: Hashable, Sendable {
    var first: UInt8?
    var last: UInt8?
    var minimumLength: Int

    init(tokens: [GlobPattern.Token]) {
        func asciiLiteral(_ token: GlobPattern.Token?) -> UInt8? {
            guard case let .literal(character)? = token, let ascii = character.asciiValue, ascii >= 0x20 else { return nil }
            return ascii
        }
        first = asciiLiteral(tokens.first)
        last = asciiLiteral(tokens.last)
        minimumLength = tokens.count { $0 != .anyRun }
    }

    /// False only when no name with these bytes can match. `first` and `last` are the
    /// name's first and last bytes, lower-cased as the patterns are.
    func admits(first nameFirst: UInt8, last nameLast: UInt8, length: Int) -> Bool {
        if let first, first != nameFirst { return false }
        if let last, last != nameLast { return false }
        return length >= minimumLength
    }

    /// Whether any of `filters` admits the last component of `relativePath`; true when the
    /// name is not plain ASCII at either end (the full matcher decides).
    static func anyAdmits(_ filters: [GlobNameFilter], nameOf relativePath: String) -> Bool {
        let utf8 = relativePath.utf8
        let start = utf8.lastIndex(of: UInt8(ascii: "/")).map(utf8.index(after:)) ?? utf8.startIndex
        guard start < utf8.endIndex else { return true }
        let length = utf8.distance(from: start, to: utf8.endIndex)
        guard let first = lowered(utf8[start]), let last = lowered(utf8[utf8.index(before: utf8.endIndex)]) else { return true }
        return filters.contains { $0.admits(first: first, last: last, length: length) }
    }

    private static func lowered(_ byte: UInt8) -> UInt8? {
        guard byte >= 0x20, byte < 0x80 else { return nil }
        return byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 0x20 : byte
    }
}
