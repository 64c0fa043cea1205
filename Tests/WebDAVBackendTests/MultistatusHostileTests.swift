import CurlTransport
import FerryPluginAPI
import Foundation
import Testing

@testable import WebDAVBackend

/// Listings that must be refused as a whole: a server must not be able to make Ferry
/// write outside the folder it listed, or to exhaust its memory.
@Suite("Hostile and broken multistatus listings")
struct MultistatusHostileTests {
    // MARK: hrefs

    @Test("hrefs outside the listed folder or not naming one direct member are refused", arguments: [
        "/dav/photos/other/x.jpg",              // another folder
        "/dav/photos/",                         // the parent
        "/dav/",                                // further up
        "/",                                    // the server root
        "/etc/passwd",                          // an absolute path elsewhere
        "http://evil.example/etc/passwd",       // a URL elsewhere
        "/dav/photos/2024%20Alps/sub/x.jpg",    // a grandchild
        "/dav/photos/2024%20Alps/../x.jpg",     // .. inside
        "/dav/photos/2024%20Alps/..",           // .. as the name
        "/dav/photos/2024%20Alps/%2E%2E",       // .. encoded
        "/dav/photos/2024%20Alps/%2e%2E/",      // .. encoded, as a folder
        "/dav/photos/2024%20Alps/.",            // .
        "/dav/photos/2024%20Alps/./x.jpg",      // . inside
        "/dav/photos/../photos/2024%20Alps/x",  // .. in the collection's part
        "/dav/photos/2024%20Alps/a%2Fb",        // an encoded slash in the name
        "/dav/photos/2024%20Alps/a%2fb",        // the same, lower case
        "/dav/photos/2024%20Alps/a%00b",        // NUL
        "/dav/photos/2024%20Alps/a%0Ab",        // a line feed
        "/dav/photos/2024%20Alps/a%1Bb",        // ESC
        "/dav/photos/2024%20Alps/a%7Fb",        // DEL
        "/dav/photos/2024%20Alps//",            // an empty name
        "/dav/photos/2024%20Alps//x",           // an empty segment, then a name
        "/dav/photos/2024%20Alpsx/y",           // a sibling folder sharing a prefix
        "/dav/photos/2024%20Alps/a%zz",         // invalid percent-encoding
        "/dav/photos/2024%20Alps/a%4",          // truncated percent-encoding
        "/dav/photos/2024%20Alps/a%",           // a lone %
        "/dav/photos/2024%20Alps/%C3%28",       // not UTF-8
        "/dav/photos/2024%20Alps/%FF",          // not UTF-8
        "x.jpg",                                // relative
        "2024%20Alps/x.jpg",                    // relative
        "//evil.example/dav/photos/2024%20Alps/x", // network-path reference
        "file:///dav/photos/2024%20Alps/x",     // another scheme
        "ftp://host/dav/photos/2024%20Alps/x",  // another scheme
        "http:///dav/photos/2024%20Alps/x",     // no host
        "/dav/photos/2024%20Alps/x?y=1",        // a query
        "/dav/photos/2024%20Alps/x#frag",       // a fragment
        "",                                     // empty
        "   ",                                  // blank
    ])
    func hostileHref(href: String) {
        let xml = multistatus(folderResponse(alpsRequestPath), fileResponse("/dav/photos/2024%20Alps/fine.jpg"),
                              fileResponse(href))
        expectRefusal(xml)
    }

    @Test("the refusal names the offending href and the line")
    func refusalMessage() throws {
        let error = expectRefusal(multistatus(fileResponse("/dav/photos/2024%20Alps/../../../etc/passwd")))
        let message = try #require(error?.message)
        #expect(message.contains("../../../etc/passwd"))
        #expect(message.contains("line"))
    }

    /// Foundation's XMLParser on Linux crashed the process on `<?x?>` (found by `make fuzz`).
    @Test("processing instructions are refused, wherever they stand, without crashing", arguments: [
        "<?xml version=\"1.0\"?>\n<?x?>\n<D:multistatus xmlns:D=\"DAV:\"/>",
        "<?x?><D:multistatus xmlns:D=\"DAV:\"/>",
        "<?xml version=\"1.0\"?><D:multistatus xmlns:D=\"DAV:\"><?x?></D:multistatus>",
        "<?xml version=\"1.0\"?><D:multistatus xmlns:D=\"DAV:\"><D:response><?php echo 1 ?></D:response></D:multistatus>",
        "<?xml version='1.0'?>\n<?xml-stylesheet href='a.css'?>\n<D:multistatus xmlns:D=\"DAV:\"/>",
    ])
    func processingInstructions(xml: String) {
        expectRefusal(xml, mentioning: "processing instruction")
    }

    /// libxml2 switched to a UTF-7 decoder and crashed (found by `make fuzz`).
    @Test("an unclosed XML declaration is refused before libxml2 reads its encoding")
    func unclosedDeclaration() {
        expectRefusal("<?xml version=\"1.0\" encoding=\"utf-7\" ?D<\n>:multistatus xmlns:D=\"DAV:\"/>",
                      mentioning: "not closed")
    }

    @Test("a control character arriving unencoded in an href is refused")
    func rawControlCharacter() {
        expectRefusal(multistatus(fileResponse("/dav/photos/2024%20Alps/a&#9;b")))
    }

    @Test("the same name twice is refused", arguments: [
        ("/dav/photos/2024%20Alps/x.jpg", "/dav/photos/2024%20Alps/x.jpg"),
        ("/dav/photos/2024%20Alps/x.jpg", "/dav/photos/2024%20Alps/%78.jpg"),
        ("/dav/photos/2024%20Alps/x.jpg", "http://127.0.0.1:8080/dav/photos/2024%20Alps/x.jpg"),
    ])
    func duplicates(first: String, second: String) {
        expectRefusal(multistatus(fileResponse(first), fileResponse(second)), mentioning: "twice")
    }

    /// One name to Swift, two files to the server: both are listed, and the core fails
    /// them one by one (`NormalizationClash`) instead of the whole folder.
    @Test("the same name in NFC and NFD is two entries")
    func normalizationForms() throws {
        let listing = try listAlps(multistatus(fileResponse("/dav/photos/2024%20Alps/%C3%A9"),
                                               fileResponse("/dav/photos/2024%20Alps/e%CC%81")))
        #expect(Set(listing.children.map { Array($0.path.name.utf8) }) == [Array("\u{E9}".utf8), Array("e\u{301}".utf8)])
    }

    @Test("a file and a folder with the same name are refused")
    func fileAndFolderWithOneName() {
        expectRefusal(multistatus(fileResponse("/dav/photos/2024%20Alps/x"), folderResponse("/dav/photos/2024%20Alps/x/")),
                      mentioning: "twice")
    }

    @Test("the folder itself described twice is refused")
    func collectionTwice() {
        expectRefusal(multistatus(folderResponse("/dav/photos/2024%20Alps/"), folderResponse("/dav/photos/2024%20Alps")))
    }

    @Test("a file href with a trailing slash is refused")
    func fileWithTrailingSlash() {
        expectRefusal(multistatus(fileResponse("/dav/photos/2024%20Alps/x.jpg/")), mentioning: "slash")
    }

    @Test("a listed folder that the server calls a file is refused")
    func collectionIsAFile() {
        expectRefusal(multistatus(fileResponse(alpsRequestPath)), mentioning: "not a collection")
    }

    // MARK: Structure

    static let x = "<D:href>/dav/photos/2024%20Alps/x</D:href>"
    static let ok = "<D:status>HTTP/1.1 200 OK</D:status>"
    static let size = "<D:prop><D:getcontentlength>1</D:getcontentlength></D:prop>"

    @Test("responses and propstats missing what RFC 4918 requires are refused", arguments: [
        "<D:response><D:propstat><D:prop><D:resourcetype/></D:prop>\(ok)</D:propstat></D:response>",  // no href
        "<D:response>\(x)</D:response>",  // neither propstat nor status
        "<D:response>\(x)<D:propstat>\(size)</D:propstat></D:response>",  // propstat without status
        "<D:response>\(x)<D:propstat><D:prop/><D:status>banana</D:status></D:propstat></D:response>",
        "<D:response>\(x)<D:status>HTTP/1.1 2000 OK</D:status></D:response>",
        "<D:response>\(x)<D:href>/dav/photos/2024%20Alps/y</D:href><D:propstat>\(size)\(ok)</D:propstat></D:response>",
    ])
    func incompleteResponses(response: String) {
        expectRefusal(multistatus(response))
    }

    @Test("a file without a valid getcontentlength is refused", arguments: ["", "-1", "+1", "12abc", "1.5", "0x10",
                                                                         "99999999999999999999"])
    func invalidSizes(size: String) {
        expectRefusal(multistatus(fileResponse("/dav/photos/2024%20Alps/x.jpg", size: size)), mentioning: "getcontentlength")
    }

    @Test("a file whose getcontentlength only comes under 404 is refused")
    func sizeOnlyUnder404() {
        expectRefusal(multistatus("""
            <D:response><D:href>/dav/photos/2024%20Alps/x.jpg</D:href>
            <D:propstat><D:prop><D:resourcetype/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>
            <D:propstat><D:prop><D:getcontentlength>5</D:getcontentlength></D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>
            </D:response>
            """), mentioning: "getcontentlength")
    }

    // MARK: Not a multistatus

    @Test("documents that are not a DAV: multistatus are refused", arguments: [
        #"<D:propfind xmlns:D="DAV:"><D:prop/></D:propfind>"#,
        #"<multistatus><response><href>/dav/photos/2024%20Alps/x</href></response></multistatus>"#,
        #"<D:multistatus xmlns:D="urn:not-dav"></D:multistatus>"#,
        "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>",
        #"{"error": "not xml"}"#,
        "abc",
        "   \n  ",
        "<",
    ])
    func notMultistatus(xml: String) {
        expectRefusal(xml)
    }

    @Test("an empty body is refused")
    func emptyBody() {
        expectRefusal(Data(), mentioning: "empty")
    }

    @Test("malformed XML is refused with the line of the error", arguments: [
        // mismatched end tag on line 3
        "<?xml version=\"1.0\"?>\n<D:multistatus xmlns:D=\"DAV:\">\n<D:response><D:href>/x</D:hraf></D:response>\n</D:multistatus>",
        // undeclared prefix on line 3
        "<?xml version=\"1.0\"?>\n<D:multistatus xmlns:D=\"DAV:\">\n<X:response></X:response>\n</D:multistatus>",
        // an unescaped & on line 3
        "<?xml version=\"1.0\"?>\n<D:multistatus xmlns:D=\"DAV:\">\n<D:response><D:href>/a&b</D:href></D:response>\n</D:multistatus>",
        // a second root element on line 3
        "<?xml version=\"1.0\"?>\n<D:multistatus xmlns:D=\"DAV:\">\n</D:multistatus><D:multistatus xmlns:D=\"DAV:\"/>",
    ])
    func malformed(xml: String) throws {
        let error = try #require(expectRefusal(xml))
        #expect(error.message.contains("line 3"), "\(error.message)")
    }

    @Test("a truncated listing is refused", arguments: [200, 1000, 1500, 1900])
    func truncated(length: Int) throws {
        let whole = Data(MultistatusServerSampleTests.nginx.utf8)
        #expect(length < whole.count)
        let error = try #require(expectRefusal(whole.prefix(length)))
        #expect(error.message.contains("line"), "\(error.message)")
    }

    // MARK: Entities and encodings

    static let billionLaughs = """
        <?xml version="1.0"?>
        <!DOCTYPE lolz [
         <!ENTITY lol "lol">
         <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
         <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
         <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
         <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
         <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
         <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
         <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
         <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
         <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
        ]>
        <D:multistatus xmlns:D="DAV:">
        <D:response><D:href>/dav/photos/2024%20Alps/&lol9;</D:href><D:status>HTTP/1.1 200 OK</D:status></D:response>
        </D:multistatus>
        """

    static let quadraticBlowup: String = {
        let big = String(repeating: "x", count: 50_000)
        let refs = String(repeating: "&big;", count: 50_000)
        return """
            <?xml version="1.0"?><!DOCTYPE m [<!ENTITY big "\(big)">]>
            <D:multistatus xmlns:D="DAV:"><D:responsedescription>\(refs)</D:responsedescription></D:multistatus>
            """
    }()

    static let externalEntity = """
        <?xml version="1.0" encoding="utf-8"?>
        <!DOCTYPE D:multistatus [ <!ENTITY xxe SYSTEM "file:///etc/hostname"> ]>
        <D:multistatus xmlns:D="DAV:">
        <D:response><D:href>/dav/photos/2024%20Alps/x.jpg</D:href><D:propstat><D:prop>
        <D:resourcetype/><D:getcontentlength>1</D:getcontentlength><D:getetag>&xxe;</D:getetag>
        </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
        </D:multistatus>
        """

    static let externalDTD = """
        <?xml version="1.0"?>
        <!-- a comment first -->
        <!DOCTYPE D:multistatus SYSTEM "http://127.0.0.1:1/evil.dtd">
        <D:multistatus xmlns:D="DAV:"></D:multistatus>
        """

    static let parameterEntity = """
        <?xml version="1.0"?>
        <!DOCTYPE m [ <!ENTITY % remote SYSTEM "http://127.0.0.1:1/x.dtd"> %remote; ]>
        <D:multistatus xmlns:D="DAV:"></D:multistatus>
        """

    @Test("documents with a DTD (entity bombs, external entities) are refused before parsing", arguments: [
        billionLaughs, quadraticBlowup, externalEntity, externalDTD, parameterEntity,
    ])
    func documentTypeDeclarations(xml: String) {
        expectRefusal(xml, mentioning: "DOCTYPE")
    }

    @Test("an entity reference without a declaration is refused")
    func undeclaredEntity() {
        expectRefusal(multistatus(fileResponse("/dav/photos/2024%20Alps/x.jpg", etag: "&xxe;")))
    }

    /// libxml2 crashed on malformed UTF-16 (found by `make fuzz`); servers answer in UTF-8.
    @Test("UTF-16 listings are refused, a well-formed one too", arguments: [true, false])
    func utf16Listing(bigEndian: Bool) throws {
        let xml = multistatus(fileResponse("/dav/photos/2024%20Alps/%C3%A9t%C3%A9.jpg"))
            .replacingOccurrences(of: "utf-8", with: "UTF-16")
        expectRefusal(utf16(xml, bigEndian: bigEndian), mentioning: "UTF-16")
        expectRefusal(utf16(Self.billionLaughs, bigEndian: bigEndian), mentioning: "UTF-16")
        expectRefusal(Data([0xFF, 0xFE, 0x00]) + Data(" <?xml version='1.0' ?><m/>".utf8), mentioning: "UTF-16")
    }

    @Test("any declared encoding but UTF-8 and ASCII is refused (libxml2 crashed switching to some)", arguments: [
        "UTF-7", "EBCDIC-US", "UTF-32", "Shift_JIS", "iso8859-8", "ISO-8859-1", "windows-1252", "UTF-16",
    ])
    func unacceptedEncodings(encoding: String) {
        let xml = multistatus(fileResponse("/dav/photos/2024%20Alps/x.jpg")).replacingOccurrences(of: "utf-8", with: encoding)
        expectRefusal(xml, mentioning: "encoding")
    }

    @Test("UTF-32 and EBCDIC bodies are refused", arguments: [
        [0x00, 0x00, 0x00, 0x3C], [0x3C, 0x00, 0x00, 0x00], [0x00, 0x00, 0xFE, 0xFF], [0xFF, 0xFE, 0x00, 0x00],
        [0x4C, 0x6F, 0xA7, 0x94],
    ] as [[UInt8]])
    func wideEncodings(start: [UInt8]) {
        expectRefusal(Data(start + Array("<?xml version=\"1.0\"?>".utf8)))
    }

    @Test("comments and a BOM before the root are fine")
    func prologWithoutDTD() throws {
        let xml = "\u{FEFF}<?xml version='1.0' encoding='UTF-8'?>\n<!-- generated -->\n"
            + multistatus(fileResponse("/dav/photos/2024%20Alps/x.jpg")).split(separator: "\n").dropFirst().joined(separator: "\n")
        let listing = try listAlps(xml)
        #expect(listing.children.map(\.path.name) == ["x.jpg"])
    }

    // MARK: Limits

    @Test("a body over maxBytes is refused before parsing")
    func overMaxBytes() {
        let xml = multistatus(fileResponse("/dav/photos/2024%20Alps/x.jpg"))
        expectRefusal(xml, limits: ListingLimits(maxBytes: xml.utf8.count - 1), mentioning: "bytes")
        #expect(throws: Never.self) {
            try listAlps(xml, limits: ListingLimits(maxBytes: xml.utf8.count))
        }
    }

    @Test("maxEntries counts children, not the folder itself")
    func maxEntriesBoundary() throws {
        let xml = multistatus(folderResponse(alpsRequestPath), fileResponse("/dav/photos/2024%20Alps/a"),
                              fileResponse("/dav/photos/2024%20Alps/b"), fileResponse("/dav/photos/2024%20Alps/c"))
        #expect(try listAlps(xml, limits: ListingLimits(maxEntries: 3)).children.count == 3)
        expectRefusal(xml, limits: ListingLimits(maxEntries: 2), mentioning: "more than 2 entries")
    }

    @Test("endless skipped responses count against maxEntries too")
    func skippedResponsesCount() {
        let notFound = "<D:response><D:href>/dav/photos/2024%20Alps/gone</D:href><D:status>HTTP/1.1 404 Not Found</D:status></D:response>"
        let xml = multistatus(Array(repeating: notFound, count: 20).joined(separator: "\n"))
        expectRefusal(xml, limits: ListingLimits(maxEntries: 10), mentioning: "more than 10 entries")
    }

    @Test("a 100,000-entry listing (about 30 MB, over libxml2's 10 MB single-buffer limit) is read")
    func hugeListing() throws {
        let body = GeneratedListing.body
        #expect(body.count > 10_000_000)
        let listing = try MultistatusParser.parse(body, requestPath: GeneratedListing.requestPath,
                                                  directory: GeneratedListing.directory, limits: ListingLimits())
        #expect(listing.collectionETag == #""root-etag""#)
        #expect(listing.children.count == GeneratedListing.count)
        #expect(listing.children.first?.path == path("big/IMG_000000.jpg"))
        #expect(listing.children.last?.path == path("big/IMG_099999.jpg"))
        #expect(listing.children[12_345] == RemoteEntry(
            path: path("big/IMG_012345.jpg"), kind: .file, size: 12_345, modifiedNanos: GeneratedListing.modified(12_345),
            etag: #""e-12345""#))
        #expect(zip(listing.children, listing.children.dropFirst()).allSatisfy { $0.path < $1.path })
    }

    @Test("the same listing over maxEntries is refused")
    func hugeListingOverLimit() {
        do {
            let listing = try MultistatusParser.parse(GeneratedListing.body, requestPath: GeneratedListing.requestPath,
                                                      directory: GeneratedListing.directory,
                                                      limits: ListingLimits(maxEntries: 99_999))
            Issue.record("expected a refusal, got \(listing.children.count) children")
        } catch {
            #expect(error.code == .protocolViolation)
            #expect(error.message.contains("more than 99999 entries"), "\(error.message)")
        }
    }
}

/// `count` files in `/dav/big/`, generated once and shared by the tests that need it.
enum GeneratedListing {
    static let count = 100_000
    static let requestPath = "/dav/big/"
    static let directory = path("big")

    /// Every file has its own time, one second apart.
    static func modified(_ index: Int) -> Int64 {
        march5Nanos + Int64(index) * 1_000_000_000
    }

    static let body: Data = {
        var xml = """
            <?xml version="1.0" encoding="utf-8" ?>
            <D:multistatus xmlns:D="DAV:">
            <D:response><D:href>/dav/big/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype>\
            <D:getetag>"root-etag"</D:getetag></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>

            """
        xml.reserveCapacity(count * 330)
        // Written in reverse order: the parser sorts.
        for index in stride(from: count - 1, through: 0, by: -1) {
            var digits = String(index)
            digits = String(repeating: "0", count: 6 - digits.count) + digits
            xml += "<D:response>\n<D:href>/dav/big/IMG_\(digits).jpg</D:href>\n<D:propstat>\n<D:prop>\n"
            xml += "<D:getcontentlength>\(index)</D:getcontentlength>\n"
            xml += "<D:getlastmodified>\(HTTPDate.format(nanos: modified(index)))</D:getlastmodified>\n"
            xml += "<D:resourcetype></D:resourcetype>\n<D:getetag>\"e-\(index)\"</D:getetag>\n"
            xml += "</D:prop>\n<D:status>HTTP/1.1 200 OK</D:status>\n</D:propstat>\n</D:response>\n"
        }
        xml += "</D:multistatus>\n"
        return Data(xml.utf8)
    }()
}

/// The text encoded as UTF-16 with a byte order mark.
func utf16(_ text: String, bigEndian: Bool) -> Data {
    var bytes: [UInt8] = bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]
    for unit in text.utf16 {
        let high = UInt8(unit >> 8), low = UInt8(unit & 0xFF)
        bytes += bigEndian ? [high, low] : [low, high]
    }
    return Data(bytes)
}
