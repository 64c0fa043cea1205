import FerryPluginAPI
import Foundation
import Testing

@testable import WebDAVBackend

@Suite("Multistatus parsing rules")
struct MultistatusParserTests {
    // MARK: The collection itself

    @Test("the folder's own response gives the collection ETag and is not a child", arguments: [
        "/dav/photos/2024%20Alps/",
        "/dav/photos/2024%20Alps",
        "http://127.0.0.1:8080/dav/photos/2024%20Alps/",
        "https://DAV.example.org/dav/photos/2024%20Alps",
        "/dav/photos/2024 Alps/",          // a server that does not encode spaces
        "/d%61v/photos/2024%20Alps/",       // encoded where we did not encode
    ])
    func collectionHref(href: String) throws {
        let listing = try listAlps(multistatus(folderResponse(href, etag: "  W/\"abc\"\n "),
                                               fileResponse("/dav/photos/2024%20Alps/x.jpg")))
        #expect(listing.collectionETag == #"W/"abc""#)
        #expect(listing.children.map(\.path) == [path("photos/2024 Alps/x.jpg")])
    }

    @Test("a listing without the folder's own response has no collection ETag")
    func collectionMissing() throws {
        let listing = try listAlps(multistatus(fileResponse("/dav/photos/2024%20Alps/x.jpg", etag: #""x""#)))
        #expect(listing.collectionETag == nil)
        #expect(listing.children.map(\.etag) == [#""x""#])
    }

    @Test("an empty folder")
    func emptyFolder() throws {
        let listing = try listAlps(multistatus(folderResponse(alpsRequestPath, etag: #""e""#)))
        #expect(listing == DAVListing(collectionETag: #""e""#, children: []))
        #expect(try listAlps(multistatus()) == DAVListing(collectionETag: nil, children: []))
    }

    // MARK: Encodings of the same path

    @Test("hrefs encoded differently from the request still match", arguments: [
        // (request path as sent, href as the server wrote it, expected child name)
        ("/dav/a~b%26c/", "/dav/a%7Eb&amp;c/x", "x"),
        ("/dav/a%7Eb&c/", "/dav/a~b%26c/x", "x"),
        ("/dav/%c3%a9t%c3%a9/", "/dav/%C3%A9t%C3%A9/%3f%23%25", "?#%"),
        ("/dav/%C3%A9t%C3%A9/", "/dav/été/a+b c", "a+b c"),
        ("/dav/%C3%A9t%C3%A9/", "/dav/e%CC%81te%CC%81/n", "n"),   // NFD for our NFC: canonically equivalent
        ("/dav/x/", "/dav/x/%F0%9F%93%B7.jpg", "📷.jpg"),
        ("/dav/x/", "/dav/x/a%20%20b", "a  b"),
        ("/dav/x/", "/dav/x/%20", " "),
    ])
    func encodings(request: String, href: String, name: String) throws {
        let directory = path("d")
        let listing = try MultistatusParser.parse(Data(multistatus(fileResponse(href)).utf8), requestPath: request,
                                                  directory: directory, limits: ListingLimits())
        #expect(listing.children.map(\.path) == [try directory.appending(name)])
    }

    @Test("a child's name keeps the server's Unicode form")
    func decomposedNameKept() throws {
        let listing = try listAlps(multistatus(fileResponse("/dav/photos/2024%20Alps/e%CC%81.jpg")))
        let name = try #require(listing.children.first?.path.name)
        #expect(Array(name.unicodeScalars) == ["e", "\u{301}", ".", "j", "p", "g"])
    }

    @Test("the backend's root can be listed", arguments: ["/", "/remote.php/dav/files/alice/"])
    func rootListing(request: String) throws {
        let xml = multistatus(folderResponse(request, etag: #""r""#), fileResponse(request + "a.jpg"),
                              folderResponse(request + "Sub%20Folder/"))
        let listing = try MultistatusParser.parse(Data(xml.utf8), requestPath: request, directory: .root,
                                                  limits: ListingLimits())
        #expect(listing.collectionETag == #""r""#)
        #expect(listing.children.map(\.path) == [path("Sub Folder"), path("a.jpg")])
    }

    @Test("a Depth 0 answer about a file reads as its parent's one-child listing")
    func depthZeroFile() throws {
        let xml = multistatus(fileResponse("/dav/photos/2024%20Alps/IMG%200001.jpg", size: "123", etag: #""f""#))
        let listing = try listAlps(xml)
        #expect(listing.children == [RemoteEntry(path: path("photos/2024 Alps/IMG 0001.jpg"), kind: .file, size: 123,
                                                 modifiedNanos: march5Nanos, etag: #""f""#)])
    }

    // MARK: Kinds and sizes

    @Test("a folder without a trailing slash in its href is still a folder; folders have size 0")
    func folderKinds() throws {
        let xml = multistatus("""
            <D:response><D:href>/dav/photos/2024%20Alps/noslash</D:href><D:propstat><D:prop>
            <D:resourcetype><D:collection/></D:resourcetype><D:getcontentlength>4096</D:getcontentlength>
            </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            """, folderResponse("/dav/photos/2024%20Alps/slash/"))
        let listing = try listAlps(xml)
        #expect(listing.children == [
            RemoteEntry(path: path("photos/2024 Alps/noslash"), kind: .directory, size: 0, modifiedNanos: nil),
            RemoteEntry(path: path("photos/2024 Alps/slash"), kind: .directory, size: 0, modifiedNanos: march5Nanos),
        ])
    }

    @Test("other resource types are files; a collection among them is a folder")
    func resourceTypes() throws {
        let xml = multistatus("""
            <D:response><D:href>/dav/photos/2024%20Alps/cal/</D:href><D:propstat><D:prop>
            <D:resourcetype><D:collection/><C:calendar xmlns:C="urn:ietf:params:xml:ns:caldav"/></D:resourcetype>
            </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            <D:response><D:href>/dav/photos/2024%20Alps/link</D:href><D:propstat><D:prop>
            <D:resourcetype><D:redirectref/></D:resourcetype><D:getcontentlength>0</D:getcontentlength>
            </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            """)
        let listing = try listAlps(xml)
        #expect(listing.children.map(\.kind) == [.directory, .file])
    }

    @Test("big sizes are read exactly")
    func bigSize() throws {
        let listing = try listAlps(multistatus(fileResponse("/dav/photos/2024%20Alps/movie.mkv",
                                                            size: "\n  9223372036854775807 ")))
        #expect(listing.children.first?.size == Int64.max)
    }

    // MARK: Status handling

    @Test("values under a non-2xx propstat are ignored")
    func non2xxPropstatsIgnored() throws {
        let xml = multistatus("""
            <D:response><D:href>/dav/photos/2024%20Alps/x.jpg</D:href>
            <D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype><D:getetag>"evil"</D:getetag>
            <D:getcontentlength>999</D:getcontentlength><D:getlastmodified>Sun, 06 Nov 1994 08:49:37 GMT</D:getlastmodified>
            </D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>
            <D:propstat><D:prop><D:resourcetype/><D:getcontentlength>5</D:getcontentlength></D:prop>
            <D:status>HTTP/1.1 200 OK</D:status></D:propstat>
            <D:propstat><D:prop><D:getetag>"secret"</D:getetag></D:prop><D:status>HTTP/1.1 403 Forbidden</D:status></D:propstat>
            <D:propstat><D:prop><D:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</D:getlastmodified></D:prop>
            <D:status>HTTP/1.0 200 OK</D:status></D:propstat>
            </D:response>
            """)
        let listing = try listAlps(xml)
        #expect(listing.children == [RemoteEntry(path: path("photos/2024 Alps/x.jpg"), kind: .file, size: 5,
                                                 modifiedNanos: march5Nanos, etag: nil)])
    }

    @Test("a response with a non-2xx status and no propstat is skipped, whatever its href", arguments: [
        "HTTP/1.1 404 Not Found", "HTTP/1.1 403 Forbidden", "HTTP/1.1 500 Internal Server Error", "HTTP/1.1 424 Failed Dependency",
    ])
    func skippedResponses(status: String) throws {
        let xml = multistatus("""
            <D:response><D:href>/dav/photos/2024%20Alps/gone.jpg</D:href><D:href>/elsewhere</D:href>
            <D:status>\(status)</D:status></D:response>
            """, fileResponse("/dav/photos/2024%20Alps/kept.jpg"))
        #expect(try listAlps(xml).children.map(\.path.name) == ["kept.jpg"])
    }

    @Test("a 2xx response without propstat lists its folder hrefs; a file needs a size")
    func okResponseWithoutPropstat() throws {
        let folder = multistatus("""
            <D:response><D:href>/dav/photos/2024%20Alps/a/</D:href><D:href>/dav/photos/2024%20Alps/b/</D:href>
            <D:status>HTTP/1.1 200 OK</D:status></D:response>
            """)
        #expect(try listAlps(folder).children.map(\.kind) == [.directory, .directory])
        let file = multistatus("""
            <D:response><D:href>/dav/photos/2024%20Alps/a.jpg</D:href><D:status>HTTP/1.1 200 OK</D:status></D:response>
            """)
        expectRefusal(file, mentioning: "getcontentlength")
    }

    // MARK: Values

    @Test("ETags are kept as the server wrote them, trimmed", arguments: [
        (#""abc""#, #""abc""#),
        (#"W/"abc""#, #"W/"abc""#),
        ("abc", "abc"),
        ("\n   \"abc\"\t\n", #""abc""#),
        ("&quot;q&quot;", #""q""#),
        ("", nil),
        ("   ", nil),
    ] as [(String, String?)])
    func etags(raw: String, expected: String?) throws {
        let listing = try listAlps(multistatus(fileResponse("/dav/photos/2024%20Alps/x", etag: raw)))
        #expect(listing.children.first?.etag == expected)
    }

    @Test("getlastmodified in every HTTP date form; garbage gives no time, not a failure", arguments: [
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777_000_000_000),
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777_000_000_000),
        ("Sun Nov  6 08:49:37 1994", 784_111_777_000_000_000),
        ("  Sun, 06 Nov 1994 08:49:37 GMT\n", 784_111_777_000_000_000),
        ("yesterday", nil),
        ("2024-03-05T10:11:12Z", nil),
        ("", nil),
        ("Sun, 32 Nov 1994 08:49:37 GMT", nil),
    ] as [(String, Int64?)])
    func lastModified(raw: String, expected: Int64?) throws {
        let listing = try listAlps(multistatus(fileResponse("/dav/photos/2024%20Alps/x", modified: raw)))
        #expect(listing.children.count == 1)
        #expect(listing.children.first?.modifiedNanos == expected)
    }

    @Test("text split by entities, CDATA and comments is joined")
    func splitText() throws {
        let xml = multistatus("""
            <D:response><D:href>/dav/photos/2024%20Alps/<![CDATA[a&b]]><!-- c -->&amp;&#x63;.jpg</D:href><D:propstat><D:prop>
            <D:resourcetype/><D:getcontentlength>1<!-- -->2</D:getcontentlength>
            </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            """)
        let listing = try listAlps(xml)
        #expect(listing.children.first?.path.name == "a&b&c.jpg")
        #expect(listing.children.first?.size == 12)
    }

    @Test("children are sorted by path whatever the server's order")
    func sorted() throws {
        let names = ["b", "a", "B", "Z", "é", "a b", "a.jpg", "10", "9"]
        let xml = multistatus(names.map { fileResponse("/dav/photos/2024%20Alps/" + WebDAVURLTestEncoding.encode($0)) }
            .joined(separator: "\n"))
        let listing = try listAlps(xml)
        let expected = try names.map { try alps.appending($0) }.sorted()
        #expect(listing.children.map(\.path) == expected)
    }

    // MARK: hrefs, directly

    @Test("href classification", arguments: [
        ("/a/b/", DAVHref.Target.collection),
        ("/a/b", .collection),
        ("http://h/a/b", .collection),
        ("/a/b/c", .member(name: "c", trailingSlash: false)),
        ("/a/b/c/", .member(name: "c", trailingSlash: true)),
        ("HTTPS://h:1/a/b/%63", .member(name: "c", trailingSlash: false)),
    ] as [(String, DAVHref.Target)])
    func classify(href: String, expected: DAVHref.Target) throws {
        #expect(try DAVHref.classify(href, collection: ["a", "b"]) == expected)
    }

    @Test("strict percent-decoding", arguments: [
        ("a%20b", "a b"), ("%41%62", "Ab"), ("%e2%9c%93", "✓"), ("a+b", "a+b"), ("100%25", "100%"),
        ("%", nil), ("%2", nil), ("%g0", nil), ("%C3", nil), ("%80", nil),
    ] as [(String, String?)])
    func percentDecoding(encoded: String, decoded: String?) {
        #expect(DAVHref.percentDecode(Substring(encoded)) == decoded)
    }

    @Test("an invalid request path is the caller's error, not the server's")
    func invalidRequestPath() {
        let error = #expect(throws: BackendError.self) {
            try MultistatusParser.parse(Data(multistatus().utf8), requestPath: "dav/%zz/", directory: alps,
                                        limits: ListingLimits())
        }
        #expect(error?.code == .invalidName)
    }
}

/// Percent-encodes a name the way clients do (RFC 3986 unreserved characters kept).
enum WebDAVURLTestEncoding {
    static func encode(_ name: String) -> String {
        var result = ""
        for byte in name.utf8 {
            if (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~") {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }
}
