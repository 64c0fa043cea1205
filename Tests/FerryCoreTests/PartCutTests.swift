import Testing

@testable import FerryPlanning

/// Where a paged plan's parts end, as a table: each side's last path read (nil: read to
/// its end) gives the part's last path, and what each side hands to the part.
@Suite("PartCut")
struct PartCutTests {
    @Test("the part ends at the first of the sides' last paths; with every side read to its end, it takes everything",
          arguments: [
              (["b/2", "a/9", nil], "a/9"),
              ([nil, nil, nil], nil),
              ([nil, "z", nil], "z"),
              // UTF-8 byte order, the order every side comes in: "B" before "a", "a/b" before "a0".
              (["a0", "a/b", "B"], "B"),
              (["a0", "a/b", nil], "a/b"),
              (["é", "z", nil], "z"),
          ] as [([String?], String?)])
    func upper(_ lastPaths: [String?], _ expected: String?) {
        let cut = PartCut(lastPaths: lastPaths)
        #expect(cut.upper == expected)
        #expect(cut.isLast == (expected == nil))
    }

    @Test("a side hands the part its paths up to the cut, the cut's own included, and keeps the rest in order")
    func take() {
        let cut = PartCut(lastPaths: ["m", nil])
        var side = ["a", "k", "m", "m/1", "n"]
        #expect(cut.take(from: &side) { $0 } == ["a", "k", "m"])
        #expect(side == ["m/1", "n"])
        var all = ["a", "b"]
        #expect(cut.take(from: &all) { $0 } == ["a", "b"])
        #expect(all.isEmpty)
        var none = ["x"]
        #expect(cut.take(from: &none) { $0 }.isEmpty)
        #expect(none == ["x"])
    }

    @Test("the last part takes what every side has left")
    func lastPart() {
        let cut = PartCut(lastPaths: [nil, nil, nil])
        var side = ["a", "zz/9"]
        #expect(cut.take(from: &side) { $0 } == ["a", "zz/9"])
        #expect(cut.contains("\u{10FFFF}"))
    }
}
