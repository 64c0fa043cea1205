import FerryPluginAPI
import Foundation
import Testing

@testable import HTTPBackend

@Suite("HTML folder indexes")
struct HTMLIndexParserTests {
    static let origin = "http://127.0.0.1:8080"
    static let alps = try! RelativePath("Alps 2024")

    static func parse(_ html: String, folderPath: String = "/files/Alps%202024/",
                      limits: IndexLimits = IndexLimits()) throws(BackendError) -> [IndexEntry] {
        try HTMLIndexParser.parse(Data(html.utf8), origin: origin, folderPath: folderPath, directory: alps, limits: limits)
    }

    static func page(_ links: String) -> String {
        "<html><head><title>Index of /files/Alps 2024/</title></head><body><pre>\(links)</pre></body></html>"
    }

    static func expectRefusal(_ html: String, limits: IndexLimits = IndexLimits(), mentioning fragment: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let entries = try parse(html, limits: limits)
            Issue.record("accepted: \(entries.map(\.name))", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .protocolViolation, sourceLocation: sourceLocation)
            #expect(error.path == alps.description, sourceLocation: sourceLocation)
            #expect(error.message.hasPrefix("refusing the folder index: "), sourceLocation: sourceLocation)
            #expect(error.message.contains(fragment), "\(error.message)", sourceLocation: sourceLocation)
        }
    }

    static func expectSample(_ entries: [IndexEntry], hidden: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        let files = Set(entries.filter { $0.kind == .file }.map(\.name))
        #expect(files == ServerSamples.fileNames.union(hidden ? [".hidden.xmp"] : []), sourceLocation: sourceLocation)
        #expect(Set(entries.filter { $0.kind == .directory }.map(\.name)) == ServerSamples.folderNames,
                sourceLocation: sourceLocation)
        #expect(entries.allSatisfy { $0.size == nil && $0.modifiedNanos == nil }, sourceLocation: sourceLocation)
    }

    @Test("nginx's real HTML index: the parent link skipped, names from the links")
    func nginxSample() throws {
        Self.expectSample(try Self.parse(ServerSamples.nginxHTML, folderPath: "/html/Alps%202024/"), hidden: false)
    }

    @Test("Apache's real index: sort links and the absolute parent link skipped, ./a:b.jpg and &amp; read")
    func apacheSample() throws {
        Self.expectSample(try Self.parse(ServerSamples.apacheHTML), hidden: false)
    }

    @Test("Python's real index, hidden files included")
    func pythonSample() throws {
        Self.expectSample(try Self.parse(ServerSamples.pythonHTML, folderPath: "/Alps%202024/"), hidden: true)
    }

    @Test("an empty folder's page has no entries")
    func empty() throws {
        #expect(try Self.parse(Self.page(#"<a href="../">../</a>"#)).isEmpty)
        #expect(try Self.parse("").isEmpty)
    }

    @Test("the same link twice is one entry (icon and name both linked)")
    func duplicateLinks() throws {
        let entries = try Self.parse(Self.page(#"<a href="a.jpg"><img src="/icons/image2.gif"></a> <a href="a.jpg">a.jpg</a> <a href="./a.jpg">a</a>"#))
        #expect(entries == [IndexEntry(name: "a.jpg", kind: .file)])
    }

    @Test("links in comments, scripts and attribute values are not links")
    func notLinks() throws {
        let html = Self.page("""
            <!-- <a href="../../etc/passwd">old</a> -->
            <script>document.write('<a href="http://evil.example/x">x</a>')</script>
            <img alt='<a href="/etc/shadow">' src="x.gif">
            <a href="real.jpg">real.jpg</a>
            """)
        #expect(try Self.parse(html) == [IndexEntry(name: "real.jpg", kind: .file)])
    }

    @Test("hostile links refuse the whole index", arguments: [
        (#"<a href="ok.jpg">ok</a><a href="http://evil.example/files/Alps%202024/x.jpg">x</a>"#, "another server"),
        (#"<a href="../../etc/passwd">p</a>"#, "outside the listed folder"),
        (#"<a href="/private/secret.jpg">s</a>"#, "outside the listed folder"),
        (#"<a href="sub/x.jpg">x</a>"#, "below a subfolder"),
        (#"<a href="a%2Fb.jpg">x</a>"#, "not a valid file name"),
        (#"<a href="%2E%2E/">x</a>"#, "not a valid file name"),
        (#"<a href="nul%00.jpg">x</a>"#, "not a valid file name"),
        (#"<a href="nul&#0;.jpg">x</a>"#, "control character"),
        (#"<a href="cr&#13;.jpg">x</a>"#, "control character"),
        (#"<a href="javascript:alert(1)">x</a>"#, "scheme"),
        (#"<a href="x.jpg?dl=1">x</a>"#, "query or fragment"),
        (#"<a href="bad%zz.jpg">x</a>"#, "invalid percent-encoding"),
        (#"<a href="x&#xD800;.jpg">x</a>"#, "not a Unicode character"),
        (#"<a href="same">f</a><a href="same/">d</a>"#, "both as a file and as a folder"),
        (#"<base href="http://evil.example/"><a href="x.jpg">x</a>"#, "<base>"),
    ])
    func hostile(links: String, fragment: String) {
        Self.expectRefusal(Self.page(links), mentioning: fragment)
    }

    @Test("a page cut off inside a tag is refused as truncated", arguments: [
        (#"<pre><a href="x.jpg">x</a><a href="y.jpg"#, "ends inside an attribute value"),
        (#"<pre><a href="x.jpg">x</a><a href=y.jpg"#, "ends inside a tag"),
        (#"<pre><a href="x.jpg">x</a></pr"#, "ends inside a tag"),
    ])
    func truncated(html: String, fragment: String) {
        Self.expectRefusal(html, mentioning: fragment)
    }

    @Test("a link that is not UTF-8 refuses the index")
    func notUTF8() {
        var body = Data(#"<a href="caf"#.utf8)
        body.append(0xE9)
        body.append(contentsOf: Data(#".jpg">x</a>"#.utf8))
        do {
            let entries = try HTMLIndexParser.parse(body, origin: Self.origin, folderPath: "/files/Alps%202024/",
                                                    directory: Self.alps, limits: IndexLimits())
            Issue.record("accepted \(entries)")
        } catch {
            #expect(error.code == .protocolViolation)
            #expect(error.message.contains("not valid UTF-8"))
        }
    }

    @Test("text outside links may be in any encoding")
    func latin1Text() throws {
        var body = Data("<title>caf".utf8)
        body.append(0xE9)
        body.append(contentsOf: Data(#"</title><a href="caf%C3%A9.jpg">caf"#.utf8))
        body.append(0xE9)
        body.append(contentsOf: Data("</a>".utf8))
        let entries = try HTMLIndexParser.parse(body, origin: Self.origin, folderPath: "/files/Alps%202024/",
                                                directory: Self.alps, limits: IndexLimits())
        #expect(entries == [IndexEntry(name: "café.jpg", kind: .file)])
    }

    @Test("the byte and entry limits hold")
    func limits() throws {
        let html = Self.page(#"<a href="a">a</a><a href="b">b</a><a href="c/">c/</a>"#)
        #expect(try Self.parse(html, limits: IndexLimits(maxEntries: 3)).count == 3)
        Self.expectRefusal(html, limits: IndexLimits(maxEntries: 2), mentioning: "more than 2 entries")
        #expect(try Self.parse(html, limits: IndexLimits(maxBytes: html.utf8.count)).count == 3)
        Self.expectRefusal(html, limits: IndexLimits(maxBytes: html.utf8.count - 1), mentioning: "more than the limit")
    }

    @Test("a large index parses")
    func large() throws {
        let links = (0..<50_000).map { #"<a href="IMG_\#($0).jpg">IMG_\#($0).jpg</a>   01-Mar-2024 10:00   \#($0)"# }
        let entries = try Self.parse(Self.page(links.joined(separator: "\n")))
        #expect(entries.count == 50_000)
    }
}
