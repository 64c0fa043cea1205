import Testing

@testable import HTTPBackend

@Suite("links in HTML folder indexes")
struct IndexHrefTests {
    static let origin = "http://127.0.0.1:8080"
    static let folder = "/files/Alps%202024/"

    static func classify(_ href: String) throws(IndexHref.Refusal) -> IndexHref.Target {
        try IndexHref.classify(href, origin: origin, folderPath: folder)
    }

    @Test("members, in every form servers write them", arguments: [
        ("IMG%200001.jpg", "IMG 0001.jpg", false),
        ("./a:b.jpg", "a:b.jpg", false),
        ("a+b&c.jpg", "a+b&c.jpg", false),
        ("it's%20%22quoted%22.jpg", "it's \"quoted\".jpg", false),
        ("%c3%a9t%c3%a9.jpg", "été.jpg", false),
        ("%C3%A9t%C3%A9.jpg", "été.jpg", false),
        ("été 日本.jpg", "été 日本.jpg", false),
        ("raw%20files/", "raw files", true),
        ("  padded.jpg\n", "padded.jpg", false),
        ("/files/Alps%202024/abs.jpg", "abs.jpg", false),
        ("/files/Alps 2024/raw.jpg", "raw.jpg", false),
        ("http://127.0.0.1:8080/files/Alps%202024/full.jpg", "full.jpg", false),
        ("HTTP://127.0.0.1:8080/files/Alps%202024/upper.jpg", "upper.jpg", false),
        ("//127.0.0.1:8080/files/Alps%202024/network.jpg", "network.jpg", false),
        ("sub/../back.jpg", "back.jpg", false),
        ("%23hash%3F.jpg", "#hash?.jpg", false),
        ("100%25%20done.gpx", "100% done.gpx", false),
        (".hidden.xmp", ".hidden.xmp", false),
    ])
    func members(href: String, name: String, isFolder: Bool) throws {
        #expect(try Self.classify(href) == .member(name: name, isFolder: isFolder))
    }

    @Test("navigation is skipped", arguments: [
        "", "  ", "#top", "?C=N;O=D", "?C=M;O=A", "../", "..", "./", ".", "/files/", "/", "/files/Alps%202024/",
        "/files/Alps%202024", "/files/Alps%202024/?C=S;O=A", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/files/",
        "../../../../", "./?C=D;O=A",
    ])
    func navigation(href: String) throws {
        #expect(try Self.classify(href) == .navigation)
    }

    @Test("the default port of the scheme is the same server")
    func defaultPorts() throws {
        #expect(try IndexHref.classify("http://example.org:80/d/a.jpg", origin: "http://example.org", folderPath: "/d/")
                == .member(name: "a.jpg", isFolder: false))
        #expect(try IndexHref.classify("https://EXAMPLE.org/d/a.jpg", origin: "https://example.org:443", folderPath: "/d/")
                == .member(name: "a.jpg", isFolder: false))
        #expect(try IndexHref.classify("http://[::1]:8080/d/a.jpg", origin: "http://[::1]:8080", folderPath: "/d/")
                == .member(name: "a.jpg", isFolder: false))
    }

    @Test("everything else is refused, with the reason", arguments: [
        ("http://evil.example/files/Alps%202024/x.jpg", "another server"),
        ("https://127.0.0.1:8080/files/Alps%202024/x.jpg", "another server"),
        ("http://127.0.0.1:9999/files/Alps%202024/x.jpg", "another server"),
        ("//evil.example/x.jpg", "another server"),
        ("http://user@127.0.0.1:8080/files/Alps%202024/x.jpg", "credentials"),
        ("http:///x.jpg", "without a host"),
        ("http:x.jpg", "without a host"),
        ("javascript:alert(1)", "scheme \"javascript\""),
        ("mailto:webmaster@example.org", "scheme \"mailto\""),
        ("file:///etc/passwd", "scheme \"file\""),
        ("data:text/html,hi", "scheme \"data\""),
        ("a:b.jpg", "scheme \"a\""),
        ("../../etc/passwd", "outside the listed folder"),
        ("/etc/passwd", "outside the listed folder"),
        ("/files/Other/x.jpg", "outside the listed folder"),
        ("../Other/x.jpg", "outside the listed folder"),
        ("sub/x.jpg", "below a subfolder"),
        ("sub/deeper/", "below a subfolder"),
        ("a%2Fb.jpg", "not a valid file name"),
        ("%2E%2E/", "not a valid file name"),
        ("%2e/", "not a valid file name"),
        ("nul%00.jpg", "not a valid file name"),
        ("line%0Abreak.jpg", "not a valid file name"),
        ("tab\tinside.jpg", "control character"),
        ("x.jpg?download=1", "query or fragment"),
        ("x.jpg#frag", "query or fragment"),
        ("bad%zz.jpg", "invalid percent-encoding"),
        ("%C3.jpg", "invalid percent-encoding"),
        ("%FF%FE.jpg", "invalid percent-encoding"),
        ("a//b.jpg", "empty path segment"),
    ])
    func refused(href: String, fragment: String) {
        do {
            let target = try Self.classify(href)
            Issue.record("accepted \(href.debugDescription) as \(target)")
        } catch {
            #expect(error.reason.contains(fragment), "\(href.debugDescription): \(error.reason)")
        }
    }

    @Test("the same address, however libcurl spells it", arguments: [
        ("http://127.0.0.1:8080/files/a%20b/", "HTTP://127.0.0.1:8080/files/a%20b/", true),
        ("http://nas.local/files/", "http://NAS.local:80/files/", true),
        ("http://127.0.0.1:8080/files/./x/../", "http://127.0.0.1:8080/files/", true),
        ("http://127.0.0.1:8080/files/%C3%A9/", "http://127.0.0.1:8080/files/%c3%a9/", true),
        ("http://127.0.0.1:8080/files/a", "http://127.0.0.1:8080/files/a/", false),
        ("http://127.0.0.1:8080/files/a/", "http://127.0.0.1:8080/other/a/", false),
        ("http://127.0.0.1:8080/files/", "https://127.0.0.1:8080/files/", false),
        ("http://127.0.0.1:8080/files/", "not a url", false),
    ])
    func sameLocation(first: String, second: String, same: Bool) {
        #expect(IndexHref.sameLocation(first, second) == same)
    }

    @Test("the root folder's own index")
    func rootFolder() throws {
        #expect(try IndexHref.classify("a.jpg", origin: Self.origin, folderPath: "/") == .member(name: "a.jpg", isFolder: false))
        #expect(try IndexHref.classify("../", origin: Self.origin, folderPath: "/") == .navigation)
        #expect(try IndexHref.classify("/", origin: Self.origin, folderPath: "/") == .navigation)
    }
}
