import FerryConfig
import Testing
@testable import FerryCore
@testable import FerryPlanning
import FerryPluginAPI

/// One row of a glob table: does `pattern` match `path`?
struct GlobCase: Sendable, CustomTestStringConvertible {
    var pattern: String
    var path: String
    var matches: Bool

    init(_ pattern: String, _ path: String, _ matches: Bool) {
        self.pattern = pattern
        self.path = path
        self.matches = matches
    }

    var testDescription: String { "'\(pattern)' \(matches ? "matches" : "does not match") '\(path)'" }
}

@Suite("GlobPattern")
struct GlobPatternTests {
    // MARK: Tables

    static let basenameCases: [GlobCase] = [
        GlobCase("*.jpg", "a.jpg", true),
        GlobCase("*.jpg", "DCIM/100CANON/a.jpg", true),
        GlobCase("*.jpg", "a/b/c/d/e/f/g.jpg", true),
        GlobCase("*.jpg", "a.jpeg", false),
        GlobCase("*.jpg", "a.jpg.txt", false),
        GlobCase("*.jpg", "a.jpg/b.txt", false),
        GlobCase("*.jpg", ".jpg", true),
        GlobCase("*.jpg", ".hidden.jpg", true),
        GlobCase("Thumbs.db", "Thumbs.db", true),
        GlobCase("Thumbs.db", "x/y/Thumbs.db", true),
        GlobCase("Thumbs.db", "Thumbs.db/x", false),
        GlobCase("*", "anything", true),
        GlobCase("*", "a/b/c", true),
        GlobCase("a*b*c", "aXXbYYc", true),
        GlobCase("a*b*c", "abc", true),
        GlobCase("a*b*c", "acb", false),
        GlobCase("a**b", "aXb", true),
        GlobCase("*.tar.*", "backup.tar.gz", true),
        GlobCase("*.tar.*", "backup.tar", false),
        GlobCase("*.tar.*", "x/backup.tar.zst", true),
        GlobCase("*_thumb.*", "IMG_0001_thumb.jpg", true),
        GlobCase("*_thumb.*", "IMG_0001_thumbnail.jpg", false),
    ]

    static let questionMarkCases: [GlobCase] = [
        GlobCase("IMG_????.jpg", "IMG_0001.jpg", true),
        GlobCase("IMG_????.jpg", "IMG_001.jpg", false),
        GlobCase("IMG_????.jpg", "IMG_00001.jpg", false),
        GlobCase("a?c", "abc", true),
        GlobCase("a?c", "ac", false),
        GlobCase("a?c", "a/c", false),
        GlobCase("?", "x", true),
        GlobCase("?", "xy", false),
        GlobCase("?.jpg", "é.jpg", true),
    ]

    static let anchoredCases: [GlobCase] = [
        GlobCase("DCIM/*.jpg", "DCIM/a.jpg", true),
        GlobCase("DCIM/*.jpg", "x/DCIM/a.jpg", false),
        GlobCase("DCIM/*.jpg", "DCIM/sub/a.jpg", false),
        GlobCase("DCIM/*.jpg", "DCIM", false),
        GlobCase("DCIM/*.jpg", "a.jpg", false),
        GlobCase("dcim/*.JPG", "DCIM/A.jpg", true),
        GlobCase("./DCIM/*.jpg", "DCIM/a.jpg", true),
        GlobCase("DCIM/*.jpg/", "DCIM/a.jpg", true),
        GlobCase("a/b/c", "a/b/c", true),
        GlobCase("a/b/c", "a/b", false),
        GlobCase("a/b/c", "a/b/c/d", false),
        GlobCase("a/*/c", "a/x/c", true),
        GlobCase("a/*/c", "a/x/y/c", false),
        GlobCase("a/b", "a//b", true),
    ]

    static let doubleStarCases: [GlobCase] = [
        GlobCase("**/.thumbnails/**", ".thumbnails/a.jpg", true),
        GlobCase("**/.thumbnails/**", "x/y/.thumbnails/a.jpg", true),
        GlobCase("**/.thumbnails/**", "x/.thumbnails/deep/er/a.jpg", true),
        GlobCase("**/.thumbnails/**", "X/.THUMBNAILS/A.JPG", true),
        GlobCase("**/.thumbnails/**", "x/thumbnails/a.jpg", false),
        GlobCase("**/.thumbnails/**", "x/.thumbnails2/a.jpg", false),
        GlobCase("**/.thumbnails/**", "x/a.thumbnails/a.jpg", false),
        GlobCase("**/*.jpg", "a.jpg", true),
        GlobCase("**/*.jpg", "a/b/c.jpg", true),
        GlobCase("**/*.jpg", "a/b/c.png", false),
        GlobCase("DCIM/**/*.jpg", "DCIM/a.jpg", true),
        GlobCase("DCIM/**/*.jpg", "DCIM/x/y/a.jpg", true),
        GlobCase("DCIM/**/*.jpg", "Other/a.jpg", false),
        GlobCase("DCIM/**/*.jpg", "x/DCIM/a.jpg", false),
        GlobCase("a/**/b", "a/b", true),
        GlobCase("a/**/b", "a/x/b", true),
        GlobCase("a/**/b", "a/x/y/b", true),
        GlobCase("a/**/b", "a/x/y/c", false),
        GlobCase("a/**/b", "a/x/b/c", false),
        GlobCase("**/**/a", "a", true),
        GlobCase("**/**/a", "x/y/a", true),
        GlobCase("a/**", "a/x", true),
        GlobCase("a/**", "a/x/y", true),
        GlobCase("a/**", "b/x", false),
        GlobCase("a/**", "x/a/y", false),
        GlobCase("**/a", "a", true),
        GlobCase("**/a", "b/a", true),
        GlobCase("**/a", "b/a/c", false),
    ]

    static let classCases: [GlobCase] = [
        GlobCase("[a-c].txt", "a.txt", true),
        GlobCase("[a-c].txt", "b.txt", true),
        GlobCase("[a-c].txt", "c.txt", true),
        GlobCase("[a-c].txt", "d.txt", false),
        GlobCase("[a-c].txt", "B.TXT", true),
        GlobCase("[A-C]x", "bX", true),
        GlobCase("[abc]", "b", true),
        GlobCase("[abc]", "d", false),
        GlobCase("[abc]", "ab", false),
        GlobCase("IMG_[0-9][0-9].jpg", "IMG_42.jpg", true),
        GlobCase("IMG_[0-9][0-9].jpg", "IMG_4x.jpg", false),
        GlobCase("[!0-9]*", "a1", true),
        GlobCase("[!0-9]*", "1a", false),
        GlobCase("[^0-9]*", "1a", false),
        GlobCase("[^0-9]*", "x", true),
        GlobCase("[!a]", "", false),
        GlobCase("[]]x", "]x", true),
        GlobCase("[]]x", "ax", false),
        GlobCase("[a-]", "-", true),
        GlobCase("[a-]", "a", true),
        GlobCase("[a-]", "b", false),
        GlobCase("x[0-9a-f]y", "xey", true),
        GlobCase("x[0-9a-f]y", "xgy", false),
        GlobCase("[*]", "*", true),
        GlobCase("[*]", "a", false),
    ]

    static let braceCases: [GlobCase] = [
        GlobCase("*.{jpg,jpeg}", "a.jpg", true),
        GlobCase("*.{jpg,jpeg}", "a.JPEG", true),
        GlobCase("*.{jpg,jpeg}", "x/y/a.jpeg", true),
        GlobCase("*.{jpg,jpeg}", "a.png", false),
        GlobCase("*.{jpg,jpeg}", "a.jp", false),
        GlobCase("*.{jp{g,eg},png}", "a.jpg", true),
        GlobCase("*.{jp{g,eg},png}", "a.jpeg", true),
        GlobCase("*.{jp{g,eg},png}", "a.png", true),
        GlobCase("*.{jp{g,eg},png}", "a.jp", false),
        GlobCase("*.{jp{g,eg},png}", "a.jpgeg", false),
        GlobCase("{DCIM,Camera}/*.jpg", "Camera/a.jpg", true),
        GlobCase("{DCIM,Camera}/*.jpg", "dcim/a.jpg", true),
        GlobCase("{DCIM,Camera}/*.jpg", "Pictures/a.jpg", false),
        GlobCase("a{,b}c", "ac", true),
        GlobCase("a{,b}c", "abc", true),
        GlobCase("a{,b}c", "abbc", false),
        GlobCase("{a,b}{1,2}", "b2", true),
        GlobCase("{a,b}{1,2}", "a1", true),
        GlobCase("{a,b}{1,2}", "a3", false),
        GlobCase("{a,b}{1,2}", "c1", false),
        GlobCase("IMG_{[0-9],x}.jpg", "IMG_7.jpg", true),
        GlobCase("IMG_{[0-9],x}.jpg", "IMG_x.jpg", true),
        GlobCase("IMG_{[0-9],x}.jpg", "IMG_y.jpg", false),
    ]

    static let escapeCases: [GlobCase] = [
        GlobCase("\\*.jpg", "*.jpg", true),
        GlobCase("\\*.jpg", "a.jpg", false),
        GlobCase("a\\?", "a?", true),
        GlobCase("a\\?", "ab", false),
        GlobCase("\\[x]", "[x]", true),
        GlobCase("\\[x]", "x", false),
        GlobCase("a\\\\b", "a\\b", true),
        GlobCase("\\A.jpg", "a.JPG", true),
    ]

    static let unicodeAndCaseCases: [GlobCase] = [
        GlobCase("*.jpg", "IMG.JPG", true),
        GlobCase("*.JPG", "img.jpg", true),
        GlobCase("*.Jpg", "iMg.jPG", true),
        GlobCase("été*.jpg", "ÉTÉ 2024.JPG", true),
        GlobCase("日本/*.png", "日本/写真.PNG", true),
        GlobCase("Ärger.txt", "ärger.TXT", true),
    ]

    // MARK: Matching

    @Test("basename patterns match the last component at any depth", arguments: basenameCases)
    func basename(_ row: GlobCase) throws {
        #expect(try GlobPattern(row.pattern).matches(row.path) == row.matches)
    }

    @Test("? matches exactly one character", arguments: questionMarkCases)
    func questionMark(_ row: GlobCase) throws {
        #expect(try GlobPattern(row.pattern).matches(row.path) == row.matches)
    }

    @Test("patterns with / match the whole path", arguments: anchoredCases)
    func anchored(_ row: GlobCase) throws {
        #expect(try GlobPattern(row.pattern).matches(row.path) == row.matches)
    }

    @Test("** matches zero or more folders", arguments: doubleStarCases)
    func doubleStar(_ row: GlobCase) throws {
        #expect(try GlobPattern(row.pattern).matches(row.path) == row.matches)
    }

    @Test("character classes, ranges and negation", arguments: classCases)
    func classes(_ row: GlobCase) throws {
        #expect(try GlobPattern(row.pattern).matches(row.path) == row.matches)
    }

    @Test("brace alternatives, nested and multiple", arguments: braceCases)
    func braces(_ row: GlobCase) throws {
        #expect(try GlobPattern(row.pattern).matches(row.path) == row.matches)
    }

    @Test("backslash escapes a metacharacter", arguments: escapeCases)
    func escapes(_ row: GlobCase) throws {
        #expect(try GlobPattern(row.pattern).matches(row.path) == row.matches)
    }

    @Test("matching is case-insensitive, Unicode included", arguments: unicodeAndCaseCases)
    func caseInsensitive(_ row: GlobCase) throws {
        #expect(try GlobPattern(row.pattern).matches(row.path) == row.matches)
    }

    @Test(
        "an escaped brace is a literal brace",
        arguments: [
            GlobCase("file\\{1\\}.txt", "file{1}.txt", true),
            GlobCase("file\\{1\\}.txt", "file1.txt", false),
            GlobCase("a\\}", "a}", true),
            GlobCase("\\{a,b\\}", "{a,b}", true),
            GlobCase("{a\\,b,c}", "a,b", true),
        ])
    func escapedBraces(_ row: GlobCase) throws {
        #expect(try GlobPattern(row.pattern).matches(row.path) == row.matches)
    }

    @Test(
        "a leading / anchors the pattern to the folder root (gitignore)",
        arguments: [
            GlobCase("/a.jpg", "a.jpg", true),
            GlobCase("/a.jpg", "x/a.jpg", false),
            GlobCase("/Thumbs.db", "sub/Thumbs.db", false),
        ])
    func leadingSlashAnchors(_ row: GlobCase) throws {
        #expect(try GlobPattern(row.pattern).matches(row.path) == row.matches)
    }

    @Test(
        "a trailing /** matches what is inside the folder, not the folder name itself (gitignore)",
        arguments: [
            GlobCase("a/**", "a", false),
            GlobCase("**/.thumbnails/**", ".thumbnails", false),
            GlobCase("**/.thumbnails/**", "x/.thumbnails", false),
        ])
    func trailingDoubleStarNeedsContents(_ row: GlobCase) throws {
        #expect(try GlobPattern(row.pattern).matches(row.path) == row.matches)
    }

    @Test(
        "a bare ** matches every path",
        arguments: ["a.jpg", "a/b/c.jpg", ".hidden"])
    func bareDoubleStar(_ path: String) throws {
        #expect(try GlobPattern("**").matches(path))
    }

    @Test(
        "each brace alternative is anchored on its own",
        arguments: [
            GlobCase("{*.jpg,DCIM/*.png}", "x/y/a.jpg", true),
            GlobCase("{*.jpg,DCIM/*.png}", "DCIM/a.png", true),
            GlobCase("{*.jpg,DCIM/*.png}", "x/DCIM/a.png", false),
        ])
    func braceAlternativesAnchoredSeparately(_ row: GlobCase) throws {
        #expect(try GlobPattern(row.pattern).matches(row.path) == row.matches)
    }

    @Test("an empty path matches nothing", arguments: ["*", "**", "**/*", "?*", "a/**"])
    func emptyPath(_ pattern: String) throws {
        let glob = try GlobPattern(pattern)
        #expect(!glob.matches(""))
        #expect(!glob.matches("/"))
    }

    @Test("the original text is kept for messages")
    func keepsText() throws {
        let glob = try GlobPattern("./DCIM/*.{JPG,jpeg}")
        #expect(glob.text == "./DCIM/*.{JPG,jpeg}")
        #expect(glob.description == "./DCIM/*.{JPG,jpeg}")
    }

    // MARK: The byte and character matchers

    static let allCases = basenameCases + questionMarkCases + anchoredCases + doubleStarCases + classCases
        + braceCases + escapeCases + unicodeAndCaseCases

    @Test("ASCII paths matched byte by byte give what the character matcher gives")
    func byteMatcherAgreesOnTables() throws {
        for row in Self.allCases {
            let glob = try GlobPattern(row.pattern)
            #expect(glob.matches(GlobSubject(row.path)) == row.matches, "\(row.testDescription)")
            #expect(glob.matches(GlobSubject(characters: row.path)) == row.matches, "\(row.testDescription)")
        }
    }

    @Test("the byte and character matchers agree on 20,000 generated patterns and paths")
    func byteMatcherAgreesOnGeneratedCases() {
        var random = SplitMix(seed: 0x6C0B)
        let patternAlphabet = Array("aAb.*?*[]!-/{},\\z")
        let pathAlphabet = Array("aAbBz.-/[]*?")
        var compared = 0
        for _ in 0..<20_000 {
            let pattern = String((0..<random.below(9) + 1).map { _ in patternAlphabet[random.below(patternAlphabet.count)] })
            let path = String((0..<random.below(12)).map { _ in pathAlphabet[random.below(pathAlphabet.count)] })
            guard let glob = try? GlobPattern(pattern) else { continue }
            compared += 1
            #expect(glob.matches(GlobSubject(path)) == glob.matches(GlobSubject(characters: path)),
                    "'\(pattern)' on '\(path)'")
        }
        #expect(compared > 5_000)
    }

    @Test("a path with a non-ASCII or control character takes the character matcher")
    func nonASCIIPathsUseCharacters() throws {
        for path in ["été/a.jpg", "a\r\nb", "日本/写真.PNG"] {
            guard case .characters = GlobSubject(path).form else {
                Issue.record("'\(path)' was prepared as bytes")
                continue
            }
        }
        guard case .bytes = GlobSubject("DCIM/IMG_0001.JPG").form else {
            Issue.record("an ASCII path was prepared as characters")
            return
        }
        #expect(try GlobPattern("a?b").matches("a\r\nb"))
    }

    // MARK: Syntax errors

    @Test("invalid patterns throw SyntaxError naming the pattern", arguments: [
        "", "/", "./", "[abc", "[", "[!", "[]", "x[a-", "{a,b", "{", "a}", "}", "}{", "{a,{b}", "*.{jpg,png}}",
        "a\\", "[z-a]", "DCIM/[9-0].jpg",
    ])
    func syntaxErrors(_ pattern: String) {
        let error = #expect(throws: GlobPattern.SyntaxError.self) { try GlobPattern(pattern) }
        #expect(error?.pattern == pattern)
        #expect(error?.problem.isEmpty == false)
        #expect(error?.description.contains("invalid glob '\(pattern)'") == true)
    }

    @Test("valid edge patterns compile", arguments: ["*", "**", "?", "[]]", "[a-]", "{,a}", "a{b,c}d", "\\\\", "[!]]"])
    func validEdgePatterns(_ pattern: String) {
        #expect(throws: Never.self) { try GlobPattern(pattern) }
    }

    // MARK: GlobSet

    @Test("a GlobSet matches when any pattern does")
    func globSet() throws {
        let set = try GlobSet(["*.tmp", "DCIM/**", "~$*"])
        #expect(set.matches("a/b.TMP"))
        #expect(set.matches("DCIM/x/y.jpg"))
        #expect(set.matches("docs/~$report.docx"))
        #expect(!set.matches("x/DCIM/y.jpg"))
        #expect(!set.matches("a.jpg"))
        #expect(try !GlobSet([]).matches("a.jpg"))
    }

    @Test("a GlobSet refuses an invalid pattern among valid ones")
    func globSetError() {
        let error = #expect(throws: GlobPattern.SyntaxError.self) { try GlobSet(["*.jpg", "[oops", "*.png"]) }
        #expect(error?.pattern == "[oops")
    }

    @Test("built-in ignores catch Ferry's temporary files, long ones included")
    func builtInIgnores() throws {
        let set = try GlobSet(ScanSettings.builtInIgnores)
        #expect(set.matches("DCIM/" + TemporaryName.for("IMG_0001.JPG")))
        #expect(set.matches(TemporaryName.for(String(repeating: "x", count: 250))))
        #expect(set.matches("a/b/.DS_Store"))
        #expect(set.matches("download.part"))
        #expect(!set.matches("IMG_0001.JPG"))
        #expect(!set.matches("ferry-part"))
    }

    @Test("a GlobSet that turns paths away by their first and last bytes agrees with matching every pattern")
    func prefilterAgrees() throws {
        let texts = ScanSettings.builtInIgnores + ["*.JPG", "IMG_?", "[a-c]*.x", "*[!0-9]", "x*y", "\\*z", "é*", "*é", "K*", "?*?",
                                                   "{a,b}*.{c,dd}", "*.jp{,e}g", "ǅ*", "/state/**", "/State", "DCIM/*.jpg",
                                                   "/é/*", "**/x", "*/b*", "/{a,b}/c", "{/k*,*.c}", "/[d]*/**", "/?tate"]
        let names = ["", "a", "IMG_1", "img_1.jpg", "IMG_0001.JPG", ".DS_Store", ".ds_store", "Thumbs.db", "x.tmp", "~$doc",
                     "b.x", "D.X", "xy", "x", "y", "*z", "\u{212A}elvin", "Kelvin", "été", "e\u{301}t", "\u{0600}1", "a.c", "b.dd",
                     "c.c", "photo.jpeg", "photo.jpg", "ǆ", "ǅx", "\r\n", "a\u{1}", "ab", ".a.ferry-tmp", "x.part", "c",
                     "journal.sqlite"]
        let folders = ["", "DCIM/", "a/b/", "state/", "STATE/", ".ferry-versions/", "é/", "ä/", "b/", "k/", "\u{212A}/"]
        var random = SplitMix(seed: 13)
        for _ in 0..<300 {
            let chosen = (0..<(1 + random.below(4))).map { _ in texts[random.below(texts.count)] }
            let set = try GlobSet(chosen)
            let patterns = try chosen.map { try GlobPattern($0) }
            for name in names {
                for folder in folders {
                    let path = folder + name
                    #expect(set.matches(path) == patterns.contains { $0.matches(path) }, "\(chosen) on \(path.debugDescription)")
                }
            }
        }
        let anchored = try GlobSet(["*.part", "/state/**"])
        #expect(anchored.matches("state/journal.sqlite") && anchored.matches("a/x.part") && !anchored.matches("a/x.jpg"))
        #expect(try GlobSet(ScanSettings.builtInIgnores).matches(".ferry-versions/IMG_1.jpg"))
    }
}

/// A small seeded generator (SplitMix64), so generated cases are the same in every run.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
