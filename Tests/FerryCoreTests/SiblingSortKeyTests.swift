import Testing

@testable import FerryCore

@Suite("sorting siblings by packed keys gives the walk's path order")
struct SiblingSortKeyTests {
    struct Sibling {
        var name: String
        var isFolder: Bool
    }

    /// Path order by definition: the name's bytes, then `/` for a folder, then nothing.
    static func reference(_ lhs: Sibling, _ rhs: Sibling) -> Bool {
        let left = Array(lhs.name.utf8) + (lhs.isFolder ? [UInt8(ascii: "/")] : [])
        let right = Array(rhs.name.utf8) + (rhs.isFolder ? [UInt8(ascii: "/")] : [])
        return left.lexicographicallyPrecedes(right)
    }

    static func keyed(_ siblings: [Sibling]) -> [Sibling] {
        var keys = siblings.indices.map { SiblingSortKey(name: siblings[$0].name, isFolder: siblings[$0].isFolder, index: $0) }
        keys.sort { lhs, rhs in
            SiblingSortKey.order(lhs, rhs) ?? reference(siblings[lhs.index], siblings[rhs.index])
        }
        return keys.map { siblings[$0.index] }
    }

    @Test("names that start one another, folders beside files, multi-byte and control bytes, long shared prefixes")
    func sameOrderAsReference() {
        var random = SystemRandomNumberGenerator()
        let pieces = ["a", "b", "A", "é", "ü", "\u{1}", "0", ".", "-", " ", "IMG_2026", "😀", "z",
                      "holiday-photo-2026-11-27-", "0123456789abcdef0123456789abcdef"]
        for round in 0..<200 {
            var names: Set<String> = []
            while names.count < 1 + round % 60 {
                var name = ""
                for _ in 0..<Int.random(in: 1...5, using: &random) { name += pieces.randomElement(using: &random)! }
                names.insert(name)
            }
            // A folder and a file never share a name; whether each is a folder is random.
            let siblings = names.map { Sibling(name: $0, isFolder: Bool.random(using: &random)) }.shuffled(using: &random)
            let expected = siblings.sorted(by: Self.reference).map(\.name)
            #expect(Self.keyed(siblings).map(\.name) == expected)
        }
    }

    @Test("a folder sorts as its name and a slash: after a file that ends where it does, before one that goes on past '/'")
    func folderSlash() {
        let siblings = [Sibling(name: "a0", isFolder: false), Sibling(name: "a", isFolder: true),
                        Sibling(name: "a.", isFolder: false), Sibling(name: "a\u{1}", isFolder: false)]
        #expect(Self.keyed(siblings).map(\.name) == ["a\u{1}", "a.", "a", "a0"])
    }
}
