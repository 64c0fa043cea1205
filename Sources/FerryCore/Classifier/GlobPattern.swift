/// A path glob, gitignore-flavoured and case-insensitive (cameras write `IMG_0001.JPG`,
/// phones `img_0001.jpg`; both are the same kind of file).
///
/// - A pattern without `/` matches the last component of a path, at any depth: `*.jpg`.
/// - A pattern with `/` matches the whole relative path: `DCIM/*.jpg`; `**` as a whole
///   component matches zero or more folders: `**/.thumbnails/**`.
/// - Within a component: `*` (any run), `?` (one character), `[a-z]` / `[!0-9]` (a class),
///   `{jpg,jpeg}` (alternatives).
public struct GlobPattern: Sendable, Hashable, CustomStringConvertible {
    public struct SyntaxError: Error, Sendable, CustomStringConvertible {
        public var pattern: String
        public var problem: String
        public var description: String { "invalid glob '\(pattern)': \(problem)" }
    }

    public let text: String
    private let anchored: Bool
    /// One component list per brace alternative.
    private let alternatives: [[Component]]

    enum Component: Hashable, Sendable {
        case anyDepth
        case segment([Token])
    }

    enum Token: Hashable, Sendable {
        case literal(Character)
        case anyRun
        case anyOne
        case characterClass(negated: Bool, ranges: [ClosedRange<Character>])
    }

    public init(_ text: String) throws(SyntaxError) {
        self.text = text
        var body = text
        while body.hasPrefix("./") { body.removeFirst(2) }
        if body.hasPrefix("/") { body.removeFirst() }
        while body.hasSuffix("/") && body.count > 1 { body.removeLast() }
        guard !body.isEmpty else { throw SyntaxError(pattern: text, problem: "empty pattern") }
        anchored = body.contains("/")
        var compiled: [[Component]] = []
        for expanded in try GlobPattern.expandBraces(body, original: text) {
            compiled.append(try GlobPattern.compile(expanded.lowercased(), original: text))
        }
        alternatives = compiled
    }

    public var description: String { text }

    /// Whether the relative path (components joined by `/`) matches.
    public func matches(_ relativePath: String) -> Bool {
        let lowered = relativePath.lowercased()
        let parts = lowered.split(separator: "/", omittingEmptySubsequences: true).map { Array($0) }
        guard !parts.isEmpty else { return false }
        for components in alternatives {
            if anchored {
                if GlobPattern.match(components[...], parts[...]) { return true }
            } else if case let .segment(tokens) = components.first,
                      GlobPattern.matchSegment(tokens[...], parts[parts.count - 1][...]) {
                return true
            }
        }
        return false
    }

    // MARK: Compilation

    static func expandBraces(_ text: String, original: String) throws(SyntaxError) -> [String] {
        guard let open = text.firstIndex(of: "{") else {
            if text.contains("}") { throw SyntaxError(pattern: original, problem: "'}' without '{'") }
            return [text]
        }
        var depth = 0
        var close: String.Index?
        var commas: [String.Index] = []
        var index = open
        while index < text.endIndex {
            let character = text[index]
            if character == "{" { depth += 1 }
            if character == "}" {
                depth -= 1
                if depth == 0 { close = index; break }
            }
            if character == "," && depth == 1 { commas.append(index) }
            index = text.index(after: index)
        }
        guard let close else { throw SyntaxError(pattern: original, problem: "'{' without '}'") }
        let prefix = String(text[..<open])
        let suffix = String(text[text.index(after: close)...])
        var options: [String] = []
        var start = text.index(after: open)
        for comma in commas + [close] {
            options.append(String(text[start..<comma]))
            start = text.index(after: comma)
        }
        var results: [String] = []
        for option in options {
            results.append(contentsOf: try expandBraces(prefix + option + suffix, original: original))
        }
        return results
    }

    static func compile(_ body: String, original: String) throws(SyntaxError) -> [Component] {
        var components: [Component] = []
        for part in body.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "**" {
                if components.last != .anyDepth { components.append(.anyDepth) }
                continue
            }
            components.append(.segment(try tokens(Array(part), original: original)))
        }
        return components
    }

    static func tokens(_ characters: [Character], original: String) throws(SyntaxError) -> [Token] {
        var result: [Token] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            switch character {
            case "*":
                if result.last != .anyRun { result.append(.anyRun) }
            case "?":
                result.append(.anyOne)
            case "[":
                var cursor = index + 1
                var negated = false
                if cursor < characters.count, characters[cursor] == "!" || characters[cursor] == "^" {
                    negated = true
                    cursor += 1
                }
                var ranges: [ClosedRange<Character>] = []
                var first = true
                while cursor < characters.count, characters[cursor] != "]" || first {
                    first = false
                    let low = characters[cursor]
                    if cursor + 2 < characters.count, characters[cursor + 1] == "-", characters[cursor + 2] != "]" {
                        let high = characters[cursor + 2]
                        guard low <= high else { throw SyntaxError(pattern: original, problem: "range \(low)-\(high) is backwards") }
                        ranges.append(low...high)
                        cursor += 3
                    } else {
                        ranges.append(low...low)
                        cursor += 1
                    }
                }
                guard cursor < characters.count else { throw SyntaxError(pattern: original, problem: "'[' without ']'") }
                result.append(.characterClass(negated: negated, ranges: ranges))
                index = cursor
            case "\\":
                index += 1
                guard index < characters.count else { throw SyntaxError(pattern: original, problem: "trailing backslash") }
                result.append(.literal(characters[index]))
            default:
                result.append(.literal(character))
            }
            index += 1
        }
        return result
    }

    // MARK: Matching

    static func match(_ pattern: ArraySlice<Component>, _ path: ArraySlice<[Character]>) -> Bool {
        guard let first = pattern.first else { return path.isEmpty }
        switch first {
        case .anyDepth:
            let rest = pattern.dropFirst()
            var remaining = path
            while true {
                if match(rest, remaining) { return true }
                guard !remaining.isEmpty else { return false }
                remaining = remaining.dropFirst()
            }
        case let .segment(tokens):
            guard let component = path.first, matchSegment(tokens[...], component[...]) else { return false }
            return match(pattern.dropFirst(), path.dropFirst())
        }
    }

    static func matchSegment(_ tokens: ArraySlice<Token>, _ text: ArraySlice<Character>) -> Bool {
        guard let token = tokens.first else { return text.isEmpty }
        switch token {
        case .anyRun:
            let rest = tokens.dropFirst()
            if rest.isEmpty { return true }
            var remaining = text
            while true {
                if matchSegment(rest, remaining) { return true }
                guard !remaining.isEmpty else { return false }
                remaining = remaining.dropFirst()
            }
        case .anyOne:
            guard !text.isEmpty else { return false }
            return matchSegment(tokens.dropFirst(), text.dropFirst())
        case let .literal(character):
            guard text.first == character else { return false }
            return matchSegment(tokens.dropFirst(), text.dropFirst())
        case let .characterClass(negated, ranges):
            guard let character = text.first else { return false }
            let inside = ranges.contains { $0.contains(character) }
            guard inside != negated else { return false }
            return matchSegment(tokens.dropFirst(), text.dropFirst())
        }
    }
}
