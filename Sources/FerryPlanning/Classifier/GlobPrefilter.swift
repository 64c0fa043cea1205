/// What a path needs for one glob alternative to match it, checked on the path's bytes
/// before the path is prepared for matching (`GlobSubject`). It turns away nearly every
/// path in a scan: the built-in ignores all start or end with a literal, and photos rarely
/// share it. Building the subject for every scanned file was a fortieth of a no-op push's
/// CPU, and matching it against every pattern a tenth.
///
/// - A name-only alternative (`*.part`, `Thumbs.db`): the name's first and last character,
///   when the glob names them, and a least length.
/// - An anchored alternative whose first component starts with a literal
///   (`/.ferry-versions/**`): the path's first character.
///
/// The checks are necessary conditions for both matchers: an ASCII byte starts (or ends)
/// the first (or last) character; a byte outside printable ASCII leaves the path to the
/// full matcher; every token but `*` takes at least one byte.
enum GlobPrefilter: Hashable, Sendable {
    case name(first: UInt8?, last: UInt8?, minimumLength: Int)
    case pathStart(UInt8)

    /// Nil when the alternative offers no cheap condition (`**/x`, `*/x`): every path then
    /// goes to the full matcher.
    init?(anchored: Bool, first component: GlobPattern.Component?) {
        guard case let .segment(tokens)? = component else { return nil }
        if !anchored {
            self = .name(first: Self.asciiLiteral(tokens.first), last: Self.asciiLiteral(tokens.last),
                         minimumLength: tokens.count { $0 != .anyRun })
        } else if let start = Self.asciiLiteral(tokens.first) {
            self = .pathStart(start)
        } else {
            return nil
        }
    }

    private static func asciiLiteral(_ token: GlobPattern.Token?) -> UInt8? {
        guard case let .literal(character)? = token, let ascii = character.asciiValue, ascii >= 0x20 else { return nil }
        return ascii
    }

    /// The bytes of a path the filters look at, lower-cased as the patterns are; nil when
    /// one of them is not printable ASCII (the full matcher decides).
    struct Probe {
        var pathStart: UInt8
        var nameFirst: UInt8
        var nameLast: UInt8
        var nameLength: Int

        init?(_ relativePath: String) {
            let utf8 = relativePath.utf8
            guard let start = utf8.firstIndex(where: { $0 != UInt8(ascii: "/") }),
                  let pathStart = Self.lowered(utf8[start]) else { return nil }
            let nameStart = utf8.lastIndex(of: UInt8(ascii: "/")).map(utf8.index(after:)) ?? utf8.startIndex
            guard nameStart < utf8.endIndex, let nameFirst = Self.lowered(utf8[nameStart]),
                  let nameLast = Self.lowered(utf8[utf8.index(before: utf8.endIndex)]) else { return nil }
            self.pathStart = pathStart
            self.nameFirst = nameFirst
            self.nameLast = nameLast
            nameLength = utf8.distance(from: nameStart, to: utf8.endIndex)
        }

        private static func lowered(_ byte: UInt8) -> UInt8? {
            guard byte >= 0x20, byte < 0x80 else { return nil }
            return byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 0x20 : byte
        }
    }

    /// False only when no path with these bytes can match.
    func admits(_ probe: Probe) -> Bool {
        switch self {
        case let .name(first, last, minimumLength):
            if let first, first != probe.nameFirst { return false }
            if let last, last != probe.nameLast { return false }
            return probe.nameLength >= minimumLength
        case let .pathStart(start):
            return start == probe.pathStart
        }
    }

    /// Whether any of `filters` admits `relativePath`; true when the path is not plain
    /// ASCII where they look.
    static func anyAdmits(_ filters: [GlobPrefilter], _ relativePath: String) -> Bool {
        guard let probe = Probe(relativePath) else { return true }
        return filters.contains { $0.admits(probe) }
    }
}
