/// A long line of comma-separated parts, broken between parts to fit a terminal: the
/// summary "push media: 16 uploaded (768 KiB), 0 unchanged, 0 failed in 0.5 s" on 60
/// columns. Continuation lines are indented by two spaces; a part longer than the width
/// stays whole (the terminal wraps it) rather than being cut.
enum LineWrap {
    static func lines(_ line: String, width: Int?) -> [String] {
        guard let width, line.count > width, width > 10 else { return [line] }
        let parts = line.components(separatedBy: ", ")
        return pack(parts.enumerated().map { index, part in index < parts.count - 1 ? part + "," : part }, width: width)
    }

    /// A line broken between words to fit (a log line: `12:00:01 media: push → nas:media:
    /// 16 uploaded (768 KiB) in 32.9 s` on 60 columns); continuation lines are indented by
    /// two spaces, and a word longer than the width stays whole.
    static func words(_ line: String, width: Int?) -> [String] {
        guard let width, line.count > width, width > 10 else { return [line] }
        return pack(line.split(separator: " ", omittingEmptySubsequences: false).map(String.init), width: width)
    }

    /// Pieces joined by spaces into lines of at most `width` (a piece longer stays whole),
    /// continuation lines indented by two spaces.
    private static func pack(_ pieces: [String], width: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for piece in pieces {
            if current.isEmpty {
                current = (lines.isEmpty ? "" : "  ") + piece
            } else if current.count + 1 + piece.count <= width {
                current += " " + piece
            } else {
                lines.append(current)
                current = "  " + piece
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }
}
