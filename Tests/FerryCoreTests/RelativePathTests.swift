import Testing
@testable import FerryCore
import FerryPluginAPI

@Suite("RelativePath")
struct RelativePathTests {
    @Test("paths normalise: empty components and leading/trailing slashes are dropped", arguments: [
        ("a//b/", ["a", "b"]),
        ("a/b", ["a", "b"]),
        ("/a/b", ["a", "b"]),
        ("a///b//c///", ["a", "b", "c"]),
        ("", []),
        ("/", []),
        ("//", []),
        ("café/日本 写真.JPG", ["café", "日本 写真.JPG"]),
        (".hidden/..more/a..b/...", [".hidden", "..more", "a..b", "..."]),
        ("a b/ c /d ", ["a b", " c ", "d "]),
    ])
    func normalises(text: String, components: [String]) throws {
        let path = try RelativePath(text)
        #expect(path.components == components)
        #expect(path.string == components.joined(separator: "/"))
        #expect(path.isRoot == components.isEmpty)
        #expect(try RelativePath(path.string) == path)
    }

    @Test("'..', '.', control characters, NUL and DEL are refused", arguments: [
        "..", "a/..", "../a", "a/../b", ".", "./a", "a/./b", "a/.",
        "a\u{0}b", "\u{0}", "a/b\u{0}", "a\nb", "a\rb", "a\tb", "\u{1}", "\u{1B}[31m", "\u{1F}", "a\u{7F}", "\u{7F}/b",
    ])
    func refused(text: String) {
        let error = #expect(throws: BackendError.self) { try RelativePath(text) }
        #expect(error?.code == .invalidName)
        #expect(error?.isRetryable == false)
        #expect(error?.path == text)
    }

    @Test("components are validated one by one", arguments: [
        [""], ["a", ""], ["."], [".."], ["a/b"], ["/"], ["x\u{0}"], ["tab\t"], ["del\u{7F}"],
    ])
    func refusedComponents(components: [String]) {
        let error = #expect(throws: BackendError.self) { try RelativePath(components: components) }
        #expect(error?.code == .invalidName)
    }

    @Test("valid components build the same path as the string")
    func fromComponents() throws {
        #expect(try RelativePath(components: ["a", "b c", "d.jpg"]) == RelativePath("a/b c/d.jpg"))
        #expect(try RelativePath(components: []) == .root)
    }

    @Test("characters just outside the control range are allowed", arguments: [" ", "~", "\u{80}", "\u{A0}", "é", "\u{FEFF}x", "😀"])
    func allowedCharacters(name: String) throws {
        #expect(try RelativePath(name).components == [name])
    }

    @Test("name, parent and description")
    func accessors() throws {
        let path = try RelativePath("a/b/c.jpg")
        #expect(path.name == "c.jpg")
        #expect(path.parent == (try RelativePath("a/b")))
        #expect(path.parent?.parent?.parent == .root)
        #expect(RelativePath.root.parent == nil)
        #expect(RelativePath.root.name == "")
        #expect(RelativePath.root.description == "/")
        #expect(RelativePath.root.string == "")
        #expect(path.description == "a/b/c.jpg")
    }

    @Test("appending a name validates it; appending a path joins")
    func appending() throws {
        let base = try RelativePath("a")
        #expect(try base.appending("b.jpg") == RelativePath("a/b.jpg"))
        #expect(try RelativePath.root.appending("x") == RelativePath("x"))
        #expect(base.appending(try RelativePath("b/c")) == (try RelativePath("a/b/c")))
        #expect(base.appending(RelativePath.root) == base)
        for bad in ["..", ".", "", "b/c", "x\u{0}", "\n"] {
            let error = #expect(throws: BackendError.self) { try base.appending(bad) }
            #expect(error?.code == .invalidName)
        }
    }

    @Test("relative(to:) strips a base, or is nil outside it", arguments: [
        ("a/b/c", "a", "b/c" as String?),
        ("a/b/c", "", "a/b/c"),
        ("a/b/c", "a/b/c", ""),
        ("a/b/c", "a/b", "c"),
        ("ab/c", "a", nil),
        ("a", "a/b", nil),
        ("x/a/b", "a", nil),
        ("", "", ""),
        ("", "a", nil),
    ])
    func relative(path: String, base: String, expected: String?) throws {
        let result = try RelativePath(path).relative(to: RelativePath(base))
        #expect(result?.string == expected)
        if let result, let expected {
            #expect(result == (try RelativePath(expected)))
            #expect(try RelativePath(base).appending(result) == RelativePath(path))
        }
    }

    @Test("ordering puts a folder directly before its contents")
    func ordering() throws {
        let texts = ["ab", "a.txt", "a/b/c", "a b", "a", "a/b", "a-b", "b", "a/c", "a/b0"]
        let sorted = try texts.map { try RelativePath($0) }.sorted().map(\.string)
        #expect(sorted == ["a", "a/b", "a/b/c", "a/b0", "a/c", "a b", "a-b", "a.txt", "ab", "b"])
        // Plain string order would put "a b", "a-b" and "a.txt" between "a" and "a/b".
        #expect(texts.sorted() != sorted)
    }

    @Test("ordering compares UTF-8 bytes, so it is stable across platforms")
    func orderingBytes() throws {
        let paths = try ["é", "z", "Z", "e\u{301}", "_"].map { try RelativePath($0) }.sorted().map(\.string)
        #expect(paths == ["Z", "_", "e\u{301}", "z", "é"])
    }

    @Test("the root sorts first and equals an empty path")
    func rootOrdering() throws {
        let root = try RelativePath("")
        #expect(root == .root)
        #expect(root < (try RelativePath("a")))
        #expect(!(root < root))
    }

    // MARK: TemporaryName

    @Test("a temporary name sits beside its target as .NAME.ferry-part", arguments: ["a.jpg", "IMG_0001.JPG", ".hidden", "日本.png", "x"])
    func temporaryName(name: String) {
        let temporary = TemporaryName.for(name)
        #expect(temporary == "." + name + ".ferry-part")
        #expect(TemporaryName.isTemporary(temporary))
        #expect(!TemporaryName.isTemporary(name))
        #expect(TemporaryName.for(name) == temporary, "the same name on every attempt")
    }

    @Test("a writer's tag goes into the temporary name, which stays temporary and the same on every attempt")
    func taggedTemporaryName() {
        let tagged = TemporaryName.for("IMG_0001.JPG", tag: "0a1b2c3d4e5f")
        #expect(tagged == ".IMG_0001.JPG.0a1b2c3d4e5f.ferry-part")
        #expect(TemporaryName.isTemporary(tagged))
        #expect(tagged != TemporaryName.for("IMG_0001.JPG", tag: "ffffffffffff"), "two devices, two temporary files")
        #expect(TemporaryName.for("IMG_0001.JPG", tag: nil) == TemporaryName.for("IMG_0001.JPG"))
        #expect(TemporaryName.isTemporary(TemporaryName.for(String(repeating: "x", count: 250), tag: "0a1b2c3d4e5f")))
    }

    @Test("isTemporary", arguments: [
        (".a.ferry-part", true), (".ferry-part", true), ("a.ferry-part", false), (".a.ferry-part.jpg", false),
        (".a.FERRY-PART", false), ("", false), (".", false), (".a.part", false),
    ])
    func isTemporary(name: String, expected: Bool) {
        #expect(TemporaryName.isTemporary(name) == expected)
    }

    @Test("names up to the limit keep their readable form; longer ones are hashed", arguments: [
        (5, false), (200, false), (243, false), (244, true), (250, true), (255, true), (1000, true),
    ])
    func longNames(length: Int, hashed: Bool) throws {
        let name = String(repeating: "x", count: length - 4) + ".jpg"
        let temporary = TemporaryName.for(name)
        #expect(temporary.utf8.count <= 255)
        #expect(TemporaryName.isTemporary(temporary))
        #expect(temporary.hasPrefix(".ferry-") == hashed)
        #expect((temporary == "." + name + ".ferry-part") == !hashed)
        _ = try RelativePath(components: [temporary])
    }

    @Test("a 250-byte name falls back to a stable hashed name of at most 255 bytes")
    func hashedName() {
        let name = String(repeating: "a", count: 246) + ".jpg"
        #expect(name.utf8.count == 250)
        let temporary = TemporaryName.for(name)
        #expect(temporary.utf8.count <= 255)
        #expect(temporary.hasPrefix(".ferry-"))
        #expect(temporary.hasSuffix(".ferry-part"))
        #expect(temporary.utf8.count == ".ferry-".utf8.count + 16 + ".ferry-part".utf8.count)
        let hex = temporary.dropFirst(".ferry-".count).dropLast(".ferry-part".count)
        #expect(hex.count == 16)
        #expect(hex.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(TemporaryName.isTemporary(temporary))
        #expect(TemporaryName.for(name) == temporary)
        let other = String(repeating: "a", count: 246) + ".JPG"
        #expect(TemporaryName.for(other) != temporary, "distinct long names get distinct temporary names")
    }

    @Test("multi-byte names are measured in bytes")
    func multiByteNames() {
        let name = String(repeating: "é", count: 122)
        #expect(name.utf8.count == 244)
        #expect(TemporaryName.for(name).hasPrefix(".ferry-"))
        let shorter = String(repeating: "é", count: 121) + "e"
        #expect(shorter.utf8.count == 243)
        #expect(TemporaryName.for(shorter) == "." + shorter + ".ferry-part")
    }

    /// FNV-1a 64, written out from its definition.
    static func referenceFNV1a(_ text: String) -> String {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    @Test("the hashed name is FNV-1a of the full name", arguments: [244, 250, 300, 4096])
    func hashedNameIsFNV(length: Int) {
        let name = String(repeating: "n", count: length)
        #expect(TemporaryName.for(name) == ".ferry-" + Self.referenceFNV1a(name) + ".ferry-part")
        #expect(Self.referenceFNV1a("") == "cbf29ce484222325")
        #expect(Self.referenceFNV1a("a") == "af63dc4c8601ec8c")
    }
}
