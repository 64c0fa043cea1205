/// Text made safe to print: a remote chooses its file names, and a name holding control
/// characters (C0, DEL, C1: U+0080–U+009F, which some terminals obey like ESC) or
/// bidirectional overrides (U+202E makes `evil\u{202E}gpj.exe` show as `evilexe.jpg`)
/// could rewrite the screen or disguise itself. Each such character is printed as
/// `\uXXXX`: readable in text, and in a JSON line the very escape JSON uses for it.
enum TerminalSafeText {
    static func escaping(_ text: String) -> String {
        // Printable ASCII (and tab, line feed) needs nothing: its bytes are looked at
        // without decoding scalars, which every `--json` event line paid for.
        if text.utf8.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 || $0 == 0x0A }) { return text }
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Controls but tab and line feed (lines may hold several); the invisible characters
    /// that reorder text: LRM, RLM, ALM, embeddings, overrides, isolates; the line and
    /// paragraph separators (U+2028, U+2029, which break a line where none shows); and the
    /// invisible ones that make two names look the same: zero-width space, word joiner and
    /// the byte-order mark (U+200B, U+2060, U+FEFF). The joiners that emoji and scripts
    /// need (U+200C, U+200D) are left as they are.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A: return false
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        case 0x200B, 0x2028, 0x2029, 0x2060, 0xFEFF: return true
        default: return false
        }
    }
}
