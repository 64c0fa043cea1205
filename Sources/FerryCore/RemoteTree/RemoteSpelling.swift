import FerryConfig

/// A `--to`/`--from` text that is meant as a remote but is not one: `s3:/ferry/x`,
/// `s3:ferry/x`, `dav//host/x`, `nsa:photos`. Taken as a local path it would make a
/// folder named so and report success, and the person would believe there is a backup.
/// Pure logic over values.
///
/// A local path that starts with `/`, `.` or `~` is always a path (`./s3:odd` stays
/// possible); otherwise a `NAME:` before the first `/` that names no configured remote,
/// or a URL scheme followed by `//` without its colon, is refused with the nearest
/// spelling that means something.
public enum RemoteSpelling {
    /// Why `text` is refused, with the nearest valid spelling; nil when it may be taken
    /// as a local path. `remotes`: the configured remotes' names; `schemes`: the URL
    /// schemes the backends answer for (`dav`, `s3`, `file`, …).
    public static func refusal(_ text: String, remotes: [String], schemes: [String]) -> String? {
        if text.hasPrefix("/") || text.hasPrefix(".") || text.hasPrefix("~") { return nil }
        let head = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? text
        let asPath = "for a local folder of that name write ./\(text)"
        if let colon = head.firstIndex(of: ":") {
            let name = String(head[..<colon])
            let rest = String(text[text.index(after: colon)...])
            // A scheme itself (`s3:`), then a configured remote's near miss (`nass:`), then a
            // scheme's (`htps:`): a remote the person named is the likelier meaning.
            let scheme = schemes.contains(name.lowercased()) ? name.lowercased() : nil
            if scheme == nil, let remote = NearestName.among(remotes, for: name) {
                return "no remote named '\(name)'; did you mean \(remote):\(rest)? (\(asPath))"
            }
            if let scheme = scheme ?? NearestName.among(schemes, for: name.lowercased()) {
                return "'\(text)' is not a URL; did you mean \(url(scheme: scheme, rest: rest))? (\(asPath))"
            }
            return "no remote named '\(name)'" + (remotes.isEmpty ? " (no remote is configured)" : " (remotes: \(remotes.joined(separator: ", ")))")
                + "; give a configured remote, a URL (" + schemes.map { "\($0)://" }.joined(separator: ", ") + "), or \(asPath)"
        }
        // `dav//host/x`: a scheme and its slashes without the colon.
        if schemes.contains(head.lowercased()), text.dropFirst(head.count).hasPrefix("//") {
            return "'\(text)' is not a URL; did you mean \(url(scheme: head.lowercased(), rest: String(text.dropFirst(head.count))))? (\(asPath))"
        }
        return nil
    }

    /// `scheme://` and the rest without its leading slashes (`file:///` for a file URL,
    /// whose path is absolute).
    static func url(scheme: String, rest: String) -> String {
        let trimmed = rest.drop { $0 == "/" }
        return scheme == "file" ? "file:///\(trimmed)" : "\(scheme)://\(trimmed)"
    }
}
