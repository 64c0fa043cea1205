import Foundation
import PropertyBased
import Testing
@testable import FerryCore

/// `JSONObject.quote` writes names as they are when no byte needs an escape and scalar by
/// scalar otherwise: whichever way it went, Foundation's parser must read back the very
/// string, and the text must hold no control byte (one JSON line per event).
@Suite("JSON strings, generated")
struct JSONQuotePropertyTests {
    /// Scalars a file name or message may hold, the ones that need an escape among them.
    /// Not U+FEFF: Foundation's parser drops it from a string, where it stays as written
    /// (the terminal-safe output escapes it as `\ufeff` anyway).
    static let scalars: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "/", ".", "-", "\"", "\\", "\u{0}", "\u{1}", "\n", "\r", "\t", "\u{1B}", "\u{7F}",
        "\u{80}", "\u{9F}", "é", "ß", "\u{200B}", "\u{202E}", "\u{2028}", "日", "😀",
    ]

    @Test("every quoted string reads back as itself and holds no control byte")
    func readsBack() async {
        let text = Gen.int(in: 0...(Self.scalars.count - 1)).array(of: 0...24)
        await propertyCheck(count: 2000, input: text) { indexes in
            var string = ""
            for index in indexes { string.unicodeScalars.append(Self.scalars[index]) }
            let quoted = JSONObject.quote(string)
            #expect(!quoted.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "\(quoted.debugDescription)")
            let parsed = try? JSONSerialization.jsonObject(with: Data("[\(quoted)]".utf8)) as? [String]
            #expect(parsed == [string], "\(string.debugDescription) quoted as \(quoted)")
        }
    }
}
