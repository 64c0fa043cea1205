import Foundation

/// Finds the `href` of every `<a>` element in an HTML page, the way a browser's tokenizer
/// sees them: attributes are read with their quotes (so a `>` or an `<a` inside a value
/// is not markup), comments and the raw text of `<script>`, `<style>`, `<title>` and
/// `<textarea>` are skipped, and character references are decoded.
///
/// It is not a full HTML parser, and need not be: index pages are generated, and what
/// matters is that nothing a page says can make a link appear that a browser would not
/// show. A page that ends inside a tag or a quoted value is refused as truncated; a
/// `<base>` element (which would change what every relative link means) is refused.
enum HTMLLinkExtractor {
    struct Refusal: Error, Equatable {
        var reason: String
    }

    /// The elements whose content is text up to their end tag, never markup.
    private static let rawTextElements: Set<String> = ["script", "style", "title", "textarea"]

    static func hrefs(in body: Data) throws(Refusal) -> [String] {
        var cursor = ByteCursor(bytes: [UInt8](body))
        var hrefs: [String] = []
        while cursor.skip(past: UInt8(ascii: "<")) {
            if cursor.consume("!--") {
                // An unterminated comment runs to the end of the page, as in a browser.
                guard cursor.skip(pastSequence: Array("-->".utf8)) else { break }
            } else if cursor.peek == UInt8(ascii: "!") || cursor.peek == UInt8(ascii: "?")
                        || cursor.peek == UInt8(ascii: "/") {
                // Doctype, processing instruction, end tag: nothing to read up to `>`.
                guard cursor.skip(past: UInt8(ascii: ">")) else {
                    throw Refusal(reason: "the page ends inside a tag (truncated?)")
                }
            } else if let first = cursor.peek, ByteCursor.isLetter(first) {
                let name = cursor.tagName()
                let attributes = try cursor.attributes()
                switch name {
                case "a":
                    if let raw = attributes["href"] {
                        guard let text = String(validating: raw, as: UTF8.self) else {
                            throw Refusal(reason: "a link is not valid UTF-8")
                        }
                        do {
                            hrefs.append(try HTMLCharacterReferences.decode(text))
                        } catch {
                            throw Refusal(reason: "the link \(text.debugDescription) \(error.reason)")
                        }
                    }
                case "base":
                    throw Refusal(reason: "the page has a <base> element, which changes what its links point to")
                case let element where rawTextElements.contains(element):
                    guard cursor.skip(pastEndTag: element) else { return hrefs }
                default:
                    break
                }
            }
            // Anything else is a `<` in text ("a < b"): read on.
        }
        return hrefs
    }

    /// A cursor over the page's bytes. HTML's markup is ASCII, so bytes are enough; only
    /// attribute values are decoded, and only those of links.
    private struct ByteCursor {
        let bytes: [UInt8]
        var index = 0

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        static func isLetter(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
        }

        static func isBlank(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
        }

        /// Moves just past the next `byte`; false (at the end) when there is none.
        mutating func skip(past byte: UInt8) -> Bool {
            guard let found = bytes[index...].firstIndex(of: byte) else {
                index = bytes.count
                return false
            }
            index = found + 1
            return true
        }

        mutating func skip(pastSequence sequence: [UInt8]) -> Bool {
            while index < bytes.count {
                guard let found = bytes[index...].firstIndex(of: sequence[0]) else { break }
                if bytes[found...].starts(with: sequence) {
                    index = found + sequence.count
                    return true
                }
                index = found + 1
            }
            index = bytes.count
            return false
        }

        /// Moves past `</name` (any letter case) and the rest of that end tag.
        mutating func skip(pastEndTag name: String) -> Bool {
            let lowered = Array(name.utf8)
            while skip(past: UInt8(ascii: "<")) {
                guard peek == UInt8(ascii: "/") else { continue }
                let start = index + 1
                guard start + lowered.count <= bytes.count,
                      zip(bytes[start..<(start + lowered.count)], lowered).allSatisfy({ $0 | 0x20 == $1 }) else { continue }
                let after = start + lowered.count
                guard after == bytes.count || ByteCursor.isBlank(bytes[after]) || bytes[after] == UInt8(ascii: ">")
                        || bytes[after] == UInt8(ascii: "/") else { continue }
                index = after
                return skip(past: UInt8(ascii: ">"))
            }
            return false
        }

        /// Consumes `text` when the bytes at the cursor are exactly it.
        mutating func consume(_ text: String) -> Bool {
            let expected = Array(text.utf8)
            guard bytes[index...].starts(with: expected) else { return false }
            index += expected.count
            return true
        }

        /// The tag name at the cursor, lower-cased (letters, digits, `-`).
        mutating func tagName() -> String {
            let start = index
            while let byte = peek, ByteCursor.isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") {
                index += 1
            }
            return String(decoding: bytes[start..<index].map { $0 | 0x20 }, as: UTF8.self)
        }

        /// The attributes up to and including the tag's `>`, names lower-cased, values as
        /// raw bytes; the first of two same-named attributes wins, as in HTML.
        mutating func attributes() throws(Refusal) -> [String: ArraySlice<UInt8>] {
            var result: [String: ArraySlice<UInt8>] = [:]
            while true {
                while let byte = peek, ByteCursor.isBlank(byte) || byte == UInt8(ascii: "/") { index += 1 }
                guard let byte = peek else { throw Refusal(reason: "the page ends inside a tag (truncated?)") }
                if byte == UInt8(ascii: ">") {
                    index += 1
                    return result
                }
                let nameStart = index
                index += 1  // a name may start with `=`, as in HTML
                while let next = peek, !ByteCursor.isBlank(next), next != UInt8(ascii: "/"), next != UInt8(ascii: ">"),
                      next != UInt8(ascii: "=") {
                    index += 1
                }
                let name = String(decoding: bytes[nameStart..<index].map { (65...90).contains($0) ? $0 | 0x20 : $0 },
                                  as: UTF8.self)
                while let next = peek, ByteCursor.isBlank(next) { index += 1 }
                var value: ArraySlice<UInt8> = []
                if peek == UInt8(ascii: "=") {
                    index += 1
                    while let next = peek, ByteCursor.isBlank(next) { index += 1 }
                    if let quote = peek, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                        let start = index + 1
                        guard let end = bytes[start...].firstIndex(of: quote) else {
                            throw Refusal(reason: "the page ends inside an attribute value (truncated?)")
                        }
                        value = bytes[start..<end]
                        index = end + 1
                    } else {
                        let start = index
                        while let next = peek, !ByteCursor.isBlank(next), next != UInt8(ascii: ">") { index += 1 }
                        value = bytes[start..<index]
                    }
                }
                if result[name] == nil { result[name] = value }
            }
        }
    }
}
