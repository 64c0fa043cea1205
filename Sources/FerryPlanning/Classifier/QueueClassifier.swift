/// Puts each file into one queue: the first rule, in priority order, whose globs match the
/// path and whose size bounds admit the size; the default queue for the rest.
public struct QueueClassifier: Sendable {
    struct CompiledRule: Sendable {
        var name: String
        var globs: GlobSet
        var minSize: Int64?
        var maxSize: Int64?
    }

    private let rules: [CompiledRule]
    public let defaultQueue: String
    /// Queue names, highest priority first.
    public let queueNames: [String]

    public init(rules: [QueueRule], defaultQueue: String) throws(GlobPattern.SyntaxError) {
        var compiled: [CompiledRule] = []
        for rule in rules {
            compiled.append(CompiledRule(
                name: rule.name, globs: try GlobSet(rule.match), minSize: rule.minSize, maxSize: rule.maxSize))
        }
        self.rules = compiled
        self.defaultQueue = defaultQueue
        self.queueNames = rules.map(\.name)
    }

    /// The rules as one text, kept with each folder pair by the run that applied them
    /// (`FolderPairRecord.queueRules`): while it matches, a file whose size has not
    /// changed keeps the queue its row has, and a no-op run matches no globs at all.
    public var rulesText: String {
        // Unit and record separators cannot occur in a queue name or a glob from YAML.
        let rules = rules.map { rule in
            [rule.name, rule.globs.patterns.map(\.text).joined(separator: "\u{1E}"),
             rule.minSize.map(String.init) ?? "", rule.maxSize.map(String.init) ?? ""].joined(separator: "\u{1F}")
        }
        return ([defaultQueue] + rules).joined(separator: "\u{1D}")
    }

    public func queue(forPath relativePath: String, size: Int64) -> String {
        // Prepared once for all rules: splitting into characters was a fifth of a no-op
        // push's CPU when each rule did it again.
        var subject: GlobSubject?
        for rule in rules {
            if let minSize = rule.minSize, size < minSize { continue }
            if let maxSize = rule.maxSize, size > maxSize { continue }
            guard !rule.globs.patterns.isEmpty else { continue }
            let prepared = subject ?? GlobSubject(relativePath)
            subject = prepared
            if rule.globs.matches(prepared) { return rule.name }
        }
        return defaultQueue
    }

    /// The priority rank of a queue, 0 highest; unknown queues (from an older config) rank last.
    public func rank(of queue: String) -> Int {
        queueNames.firstIndex(of: queue) ?? queueNames.count
    }
}
