/// Near-miss keys in config.yml: `typ:` for `type:`, `pasword_env:` for `password_env:`.
extension ConfigReader {
    /// The allowed key closest to `key` (at most two edits away), if any.
    static func nearest(_ key: String, among allowed: [String]) -> String? {
        let candidates = allowed.map { ($0, editDistance(key.lowercased(), $0)) }.filter { $0.1 <= min(2, max(1, $0.0.count / 3)) }
        return candidates.min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance: insertions, deletions and substitutions.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// Keys a person writes for a secret, which config.yml never holds.
    static let secretKeys: Set<String> = ["password", "pass", "passwd", "token", "secret", "bearer"]
}
