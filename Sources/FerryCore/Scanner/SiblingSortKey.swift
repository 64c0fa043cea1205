/// The start of a sibling's name as the walk sorts it, packed into four words so that a
/// folder's children are sorted by comparing integers instead of strings: the name's
/// bytes, then `/` for a folder, then zeros (no name holds a zero byte, so a name that
/// ends sorts before every name it starts), big-endian. Two keys that tie on names of 32
/// bytes or more are compared in full by the caller.
///
/// Comparing `String`s byte by byte cost about 100 ns each (a thousand names take ten
/// thousand comparisons); comparing keys costs a few, and the walk is the longest of the
/// threads of a no-op push.
struct SiblingSortKey {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// The name (with its `/`) fills the key: a tie says nothing.
    private(set) var isTruncated = false
    /// Where the sibling is in the list being sorted.
    let index: Int

    init(name: String, isFolder: Bool, index: Int) {
        self.index = index
        var count = 0
        for byte in name.utf8 {
            guard count < 32 else { break }
            put(byte, at: count)
            count += 1
        }
        if isFolder && count < 32 {
            put(UInt8(ascii: "/"), at: count)
            count += 1
        }
        isTruncated = count >= 32
    }

    private mutating func put(_ byte: UInt8, at position: Int) {
        let shifted = UInt64(byte) << UInt64(56 - 8 * (position % 8))
        switch position / 8 {
        case 0: words.0 |= shifted
        case 1: words.1 |= shifted
        case 2: words.2 |= shifted
        default: words.3 |= shifted
        }
    }

    /// The order of the keys; nil when they tie and a name was too long to tell.
    static func order(_ lhs: SiblingSortKey, _ rhs: SiblingSortKey) -> Bool? {
        if lhs.words.0 != rhs.words.0 { return lhs.words.0 < rhs.words.0 }
        if lhs.words.1 != rhs.words.1 { return lhs.words.1 < rhs.words.1 }
        if lhs.words.2 != rhs.words.2 { return lhs.words.2 < rhs.words.2 }
        if lhs.words.3 != rhs.words.3 { return lhs.words.3 < rhs.words.3 }
        return lhs.isTruncated || rhs.isTruncated ? nil : false
    }
}
