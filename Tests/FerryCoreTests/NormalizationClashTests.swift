import FerryCore
import FerryPlanning
import Foundation
import Testing

@Suite("names that differ only by Unicode normalization")
struct NormalizationClashTests {
    static let nfc = "caf\u{E9}.jpg"
    static let nfd = "cafe\u{301}.jpg"

    @Test("the same name in NFC and NFD is a clash; the same bytes twice, or different names, are not")
    func groups() {
        #expect(Self.nfc == Self.nfd, "Swift compares them as equal: the reason this exists")
        #expect(NormalizationClash.groups(in: [Self.nfc, "a.jpg", Self.nfd]).map { $0.map { Array($0.utf8) } }
                == [[Array(Self.nfc.utf8), Array(Self.nfd.utf8)]])
        #expect(NormalizationClash.groups(in: [Self.nfc, Self.nfc, "a.jpg"]).isEmpty)
        #expect(NormalizationClash.groups(in: ["a/" + Self.nfc, "b/" + Self.nfd]).isEmpty)
        // A folder in two forms makes the paths below it clash.
        #expect(NormalizationClash.groups(in: ["\u{E9}t\u{E9}/x.gpx", "e\u{301}te\u{301}/x.gpx"]).count == 1)
    }

    @Test("each message says which form that file is")
    func message() {
        let group = [Self.nfc, Self.nfd]
        #expect(NormalizationClash.message(for: Self.nfc, in: group, side: "local").contains("this one is NFC"))
        #expect(NormalizationClash.message(for: Self.nfd, in: group, side: "local").contains("this one is NFD"))
    }
}
