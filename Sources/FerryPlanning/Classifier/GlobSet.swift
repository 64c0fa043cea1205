/// Several globs; a path matches when any one does.
public struct GlobSet: Sendable {
    public let patterns: [GlobPattern]
    /// Every pattern's alternatives' cheap conditions, when each has one (`GlobPrefilter`).
    private let prefilters: [GlobPrefilter]?

    public init(_ texts: [String]) throws(GlobPattern.SyntaxError) {
        var patterns: [GlobPattern] = []
        for text in texts { patterns.append(try GlobPattern(text)) }
        self.patterns = patterns
        var filters: [GlobPrefilter]? = []
        for pattern in patterns {
            guard let own = pattern.prefilters else { filters = nil; break }
            filters?.append(contentsOf: own)
        }
        prefilters = filters
    }

    public func matches(_ relativePath: String) -> Bool {
        guard !patterns.isEmpty else { return false }
        if let prefilters, !GlobPrefilter.anyAdmits(prefilters, relativePath) { return false }
        return matches(GlobSubject(relativePath))
    }

    /// The same on a path prepared once, for a caller that tries several sets on one path.
    func matches(_ subject: GlobSubject) -> Bool {
        patterns.contains { $0.matches(subject) }
    }
}
