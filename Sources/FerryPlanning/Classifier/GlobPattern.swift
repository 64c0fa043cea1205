import Foundation

/// A path glob, gitignore-flavoured and case-insensitive (cameras write `IMG_0001.JPG`,
/// phones `img_0001.jpg`; both are the same kind of file).
///
/// - A pattern without `/` matches the last component of a path, at any depth: `*.jpg`.
/// - A pattern with `/` (or starting with `/`) matches the whole relative path:
///   `DCIM/*.jpg`; `**` as a whole component matches zero or more folders, and a trailing
///   `/**` the contents of a folder (not the folder itself): `**/.thumbnails/**`.
/// - Each `{a,b/c}` alternative is anchored or not on its own.
/// - Within a component: `*` (any run), `?` (one character), `[a-z]` / `[!0-9]` (a class),
///   `{jpg,jpeg}` (alternatives).
public struct GlobPattern: Sendable, Hashable, CustomStringConvertible {
    public struct SyntaxError: Error, Sendable, CustomStringConvertible {
        public var pattern: String
        public var problem: String
        public var description: String { "invalid glob '\(pattern)': \(problem)" }
    }

    public let text: String
    /// One compiled pattern per brace alternative, each anchored or not on its own.
    private let alternatives: [Alternative]
    /// One per alternative when each offers a cheap necessary condition (`GlobPrefilter`).
    let prefilters: [GlobPrefilter]?

    struct Alternative: Hashable, Sendable {
        /// Matches the whole relative path (the pattern has a `/`, or is `**`); otherwise
        /// only the last component.
        var anchored: Bool
        var components: [Component]
        /// The same for ASCII paths (`GlobSubject`).
        var byteComponents: [ByteComponent]
    }

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
        guard !text.isEmpty else { throw SyntaxError(pattern: text, problem: "empty pattern") }
        var compiled: [Alternative] = []
        // An empty alternative (`*.jp{,e}g` → `*.jpg`, or the `{,a}` of `{,a}`) is allowed;
        // it only has to leave something to match.
        let expansions = try GlobPattern.expandBraces(text, original: text)
            .filter { !$0.trimmingCharacters(in: CharacterSet(charactersIn: "/.")).isEmpty }
        guard !expansions.isEmpty else { throw SyntaxError(pattern: text, problem: "empty pattern") }
        for expanded in expansions {
            var body = expanded
            while body.hasPrefix("./") { body.removeFirst(2) }
            // A leading "/" anchors the pattern at the folder's root, as in gitignore.
            var anchored = body.hasPrefix("/")
            while body.hasPrefix("/") { body.removeFirst() }
            while body.hasSuffix("/") && !body.hasSuffix("\\/") { body.removeLast() }
            guard !body.isEmpty else { throw SyntaxError(pattern: text, problem: "empty pattern") }
            anchored = anchored || GlobPattern.containsUnescapedSlash(body)
            let components = try GlobPattern.compile(body.lowercased(), original: text)
            if components == [.anyDepth] { anchored = true }
            compiled.append(Alternative(
                anchored: anchored, components: components, byteComponents: GlobPattern.byteComponents(components)))
        }
        alternatives = compiled
        // An alternative without a filter would make the others turn its paths away.
        var filters: [GlobPrefilter]? = []
        for alternative in compiled {
            guard let filter = GlobPrefilter(anchored: alternative.anchored, first: alternative.components.first) else {
                filters = nil
                break
            }
            filters?.append(filter)
        }
        prefilters = filters
    }

    /// `text` as a pattern that matches exactly it: every character a pattern gives a
    /// meaning to is escaped with a backslash.
    public static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            if "\\*?[]{},!".contains(character) { result.append("\\") }
            result.append(character)
        }
        return result
    }

    static func containsUnescapedSlash(_ text: String) -> Bool {
        var escaped = false
        for character in text {
            if escaped { escaped = false; continue }
            if character == "\\" { escaped = true; continue }
            if character == "/" { return true }
        }
        return false
    }

    public var description: String { text }

    /// Whether the relative path (components joined by `/`) matches.
    public func matches(_ relativePath: String) -> Bool {
        matches(GlobSubject(relativePath))
    }

    /// The same on a path prepared once for several patterns (`GlobSet`, `QueueClassifier`).
    func matches(_ subject: GlobSubject) -> Bool {
        switch subject.form {
        case let .bytes(bytes, parts):
            guard let last = parts.last else { return false }
            for alternative in alternatives {
                if alternative.anchored {
                    if GlobPattern.matchBytes(alternative.byteComponents, from: 0, bytes, parts, from: 0) { return true }
                } else if case let .segment(tokens) = alternative.byteComponents.first,
                          GlobPattern.matchSegment(tokens, bytes, last) {
                    return true
                }
            }
            return false
        case let .characters(parts):
            guard !parts.isEmpty else { return false }
            for alternative in alternatives {
                if alternative.anchored {
                    if GlobPattern.match(alternative.components[...], parts[...]) { return true }
                } else if case let .segment(tokens) = alternative.components.first,
                          GlobPattern.matchSegment(tokens[...], parts[parts.count - 1][...]) {
                    return true
                }
            }
            return false
        }
    }

    // MARK: Compilation

    /// Expands `{a,b}` alternatives (nested too); a backslash-escaped brace or comma is literal
    /// and keeps its backslash for the tokenizer.
    static func expandBraces(_ text: String, original: String) throws(SyntaxError) -> [String] {
        let characters = Array(text)
        var open: Int?
        var close: Int?
        var commas: [Int] = []
        var depth = 0
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == "\\" {
                index += 2
                continue
            }
            if character == "{" {
                if depth == 0 && open == nil { open = index }
                depth += 1
            } else if character == "}" {
                guard depth > 0 else { throw SyntaxError(pattern: original, problem: "'}' without '{'") }
                depth -= 1
                if depth == 0 && close == nil { close = index; break }
            } else if character == "," && depth == 1 {
                commas.append(index)
            }
            index += 1
        }
        guard let open else { return [text] }
        guard let close else { throw SyntaxError(pattern: original, problem: "'{' without '}'") }
        let prefix = String(characters[..<open])
        let suffix = String(characters[(close + 1)...])
        var results: [String] = []
        var start = open + 1
        for boundary in commas + [close] {
            let option = String(characters[start..<boundary])
            results.append(contentsOf: try expandBraces(prefix + option + suffix, original: original))
            start = boundary + 1
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
            // A trailing `**` stands for the contents of a folder: at least one component,
            // so `a/**` does not match `a` itself (as in gitignore).
            if rest.isEmpty { return !path.isEmpty }
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
