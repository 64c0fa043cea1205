/// The byte form of a compiled pattern, for paths that are plain ASCII (`GlobSubject`).
extension GlobPattern {
    enum ByteComponent: Hashable, Sendable {
        case anyDepth
        case segment([ByteToken])
    }

    enum ByteToken: Hashable, Sendable {
        case literal(UInt8)
        case anyRun
        case anyOne
        /// The ASCII bytes a character class admits, as a 128-bit set.
        case byteClass(low: UInt64, high: UInt64)
        /// A literal that is not ASCII: no ASCII path matches it.
        case never
    }

    static func byteComponents(_ components: [Component]) -> [ByteComponent] {
        components.map { component in
            switch component {
            case .anyDepth: .anyDepth
            case let .segment(tokens): .segment(tokens.map(byteToken))
            }
        }
    }

    private static func byteToken(_ token: Token) -> ByteToken {
        switch token {
        case .anyRun: return .anyRun
        case .anyOne: return .anyOne
        case let .literal(character):
            let scalars = character.unicodeScalars
            guard scalars.count == 1, let scalar = scalars.first, scalar.isASCII else { return .never }
            return .literal(UInt8(scalar.value))
        case let .characterClass(negated, ranges):
            var low: UInt64 = 0
            var high: UInt64 = 0
            for byte in 0..<UInt8(128) {
                let character = Character(Unicode.Scalar(byte))
                guard ranges.contains(where: { $0.contains(character) }) != negated else { continue }
                if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
            }
            return .byteClass(low: low, high: high)
        }
    }

    static func matchBytes(
        _ pattern: [ByteComponent], from patternIndex: Int,
        _ bytes: [UInt8], _ parts: [Range<Int>], from partIndex: Int
    ) -> Bool {
        guard patternIndex < pattern.count else { return partIndex == parts.count }
        switch pattern[patternIndex] {
        case .anyDepth:
            let rest = patternIndex + 1
            // A trailing `**` stands for the contents of a folder (see `match`).
            if rest == pattern.count { return partIndex < parts.count }
            var next = partIndex
            while true {
                if matchBytes(pattern, from: rest, bytes, parts, from: next) { return true }
                guard next < parts.count else { return false }
                next += 1
            }
        case let .segment(tokens):
            guard partIndex < parts.count, matchSegment(tokens, bytes, parts[partIndex]) else { return false }
            return matchBytes(pattern, from: patternIndex + 1, bytes, parts, from: partIndex + 1)
        }
    }

    /// One component against one segment's tokens. `*` never crosses a component, so going
    /// back to the last `*` is enough (the usual wildcard walk, linear for most patterns).
    static func matchSegment(_ tokens: [ByteToken], _ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        var token = 0
        var position = range.lowerBound
        var lastRun: (token: Int, position: Int)?
        while position < range.upperBound {
            if token < tokens.count {
                let byte = bytes[position]
                switch tokens[token] {
                case .anyRun:
                    lastRun = (token, position)
                    token += 1
                    continue
                case .anyOne:
                    token += 1
                    position += 1
                    continue
                case let .literal(expected) where expected == byte:
                    token += 1
                    position += 1
                    continue
                case let .byteClass(low, high) where byte < 64 ? (low >> UInt64(byte)) & 1 == 1 : (high >> UInt64(byte - 64)) & 1 == 1:
                    token += 1
                    position += 1
                    continue
                default:
                    break
                }
            }
            guard let run = lastRun else { return false }
            lastRun = (run.token, run.position + 1)
            token = run.token + 1
            position = run.position + 1
        }
        while token < tokens.count, tokens[token] == .anyRun { token += 1 }
        return token == tokens.count
    }
}
