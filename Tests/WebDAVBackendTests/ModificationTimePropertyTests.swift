import FerryPluginAPI
import Foundation
import Testing

@testable import WebDAVBackend

/// `1650000000.250000000` in nanoseconds.
private let preservedNanos: Int64 = 1_650_000_000_250_000_000

/// A file response the way Apache writes one that carries Ferry's properties: DAV: with
/// `lp1:`, Ferry's namespace with `ns1:`, all in one 200 propstat.
private func apacheFile(_ name: String, etag: String = #"W/"1a-5e0c""#, mtime: String = "1650000000.250000000",
                        version: String = #""1a-5e0c""#, size: String = "26") -> String {
    """
    <D:response xmlns:lp1="DAV:" xmlns:ns1="urn:ferry:"><D:href>/dav/photos/2024%20Alps/\(name)</D:href>\
    <D:propstat><D:prop><lp1:resourcetype/><lp1:getcontentlength>\(size)</lp1:getcontentlength>\
    <lp1:getlastmodified>\(march5)</lp1:getlastmodified><lp1:getetag>\(etag)</lp1:getetag>\
    <ns1:mtime>\(mtime)</ns1:mtime><ns1:mtime-version>\(version)</ns1:mtime-version>\
    </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
    """
}

@Suite("Ferry's mtime property")
struct ModificationTimePropertyTests {
    // MARK: Value format

    @Test("format and parse agree, nanoseconds included", arguments: [
        (Int64(1_650_000_000_250_000_000), "1650000000.250000000"),
        (1_650_000_000_000_000_001, "1650000000.000000001"),
        (0, "0.000000000"),
        (-5_250_000_000, "-6.750000000"),
        (-5_000_000_000, "-5.000000000"),
    ])
    func formatAndParse(nanos: Int64, text: String) {
        #expect(ModificationTimeProperty.format(nanos: nanos) == text)
        #expect(ModificationTimeProperty.parse(text) == nanos)
    }

    @Test("shorter forms are read", arguments: [
        ("1650000000", Int64(1_650_000_000_000_000_000)),
        ("1650000000.25", 1_650_000_000_250_000_000),
        ("  1650000000.5\n", 1_650_000_000_500_000_000),
    ])
    func shorterForms(text: String, nanos: Int64) {
        #expect(ModificationTimeProperty.parse(text) == nanos)
    }

    @Test("anything else is nil", arguments: [
        "", ".", "1650000000.", ".5", "1650000000.1234567890", "abc", "1e9", "+1650000000",
        "1650000000.25.5", "99999999999999999", "1650000000,25", "١٢٣",
    ])
    func garbage(text: String) {
        #expect(ModificationTimeProperty.parse(text) == nil)
    }

    @Test("the version stamp is the ETag without W/, else size and last-modified second")
    func versionStamp() {
        #expect(ModificationTimeProperty.versionStamp(size: 5, lastModifiedNanos: 1_000_000_000_500, etag: #"W/"a-b""#) == #""a-b""#)
        #expect(ModificationTimeProperty.versionStamp(size: 5, lastModifiedNanos: 1_700_000_000_900_000_000, etag: nil)
                == "5 1700000000")
        #expect(ModificationTimeProperty.versionStamp(size: 5, lastModifiedNanos: nil, etag: nil) == nil)
    }

    @Test("the PROPPATCH body escapes the stamp and names Ferry's namespace")
    func propertyUpdate() {
        let body = ModificationTimeProperty.propertyUpdate(nanos: preservedNanos, versionStamp: #""a&b<c""#)
        #expect(body.contains(#"xmlns:f="urn:ferry:""#))
        #expect(body.contains("<f:mtime>1650000000.250000000</f:mtime>"))
        #expect(body.contains(#"<f:mtime-version>"a&amp;b&lt;c"</f:mtime-version>"#))
    }

    // MARK: Listings

    @Test("a file whose version matches the stamp lists the preserved time")
    func preservedTimeListed() throws {
        let listing = try listAlps(multistatus(apacheFile("a.jpg")))
        #expect(listing.children.first?.modifiedNanos == preservedNanos)
        #expect(listing.children.first?.size == 26)
    }

    @Test("any prefix, or none, for Ferry's namespace", arguments: [
        #"<f:mtime xmlns:f="urn:ferry:">1650000000.25</f:mtime><f:mtime-version xmlns:f="urn:ferry:">"e"</f:mtime-version>"#,
        #"<mtime xmlns="urn:ferry:">1650000000.25</mtime><mtime-version xmlns="urn:ferry:">"e"</mtime-version>"#,
        #"<D:mtime xmlns:D="urn:ferry:">1650000000.25</D:mtime><D:mtime-version xmlns:D="urn:ferry:">"e"</D:mtime-version>"#,
    ])
    func anyPrefix(properties: String) throws {
        let xml = multistatus("""
            <D:response><D:href>/dav/photos/2024%20Alps/a.jpg</D:href><D:propstat><D:prop>\
            <D:resourcetype/><D:getcontentlength>6</D:getcontentlength><D:getlastmodified>\(march5)</D:getlastmodified>\
            <D:getetag>"e"</D:getetag>\(properties)</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            """)
        #expect(try listAlps(xml).children.first?.modifiedNanos == preservedNanos)
    }

    @Test("the properties in a 404 propstat (a file Ferry never set them on) are ignored")
    func notFoundPropstat() throws {
        let xml = multistatus("""
            <D:response><D:href>/dav/photos/2024%20Alps/a.jpg</D:href>\
            <D:propstat><D:prop><D:resourcetype/><D:getcontentlength>6</D:getcontentlength>\
            <D:getlastmodified>\(march5)</D:getlastmodified><D:getetag>"e"</D:getetag></D:prop>\
            <D:status>HTTP/1.1 200 OK</D:status></D:propstat>\
            <D:propstat><D:prop><f:mtime xmlns:f="urn:ferry:">1650000000.25</f:mtime>\
            <f:mtime-version xmlns:f="urn:ferry:">"e"</f:mtime-version></D:prop>\
            <D:status>HTTP/1.1 404 Not Found</D:status></D:propstat></D:response>
            """)
        #expect(try listAlps(xml).children.first?.modifiedNanos == march5Nanos)
    }

    @Test("a file changed since the time was set (another ETag) lists the server's time")
    func staleVersion() throws {
        let listing = try listAlps(multistatus(apacheFile("a.jpg", etag: #""1a-9999""#)))
        #expect(listing.children.first?.modifiedNanos == march5Nanos)
    }

    @Test("without an ETag, size and last-modified second are the stamp")
    func stampWithoutETag() throws {
        let seconds = march5Nanos / 1_000_000_000
        func file(version: String) -> String {
            multistatus("""
                <D:response><D:href>/dav/photos/2024%20Alps/a.jpg</D:href><D:propstat><D:prop>\
                <D:resourcetype/><D:getcontentlength>6</D:getcontentlength><D:getlastmodified>\(march5)</D:getlastmodified>\
                <f:mtime xmlns:f="urn:ferry:">1650000000.25</f:mtime><f:mtime-version xmlns:f="urn:ferry:">\(version)</f:mtime-version>\
                </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
                """)
        }
        #expect(try listAlps(file(version: "6 \(seconds)")).children.first?.modifiedNanos == preservedNanos)
        #expect(try listAlps(file(version: "7 \(seconds)")).children.first?.modifiedNanos == march5Nanos)
        #expect(try listAlps(file(version: "6 \(seconds + 1)")).children.first?.modifiedNanos == march5Nanos)
    }

    @Test("a time without its stamp, an unreadable time, or the names in DAV: are ignored", arguments: [
        #"<f:mtime xmlns:f="urn:ferry:">1650000000.25</f:mtime>"#,
        #"<f:mtime xmlns:f="urn:ferry:">soon</f:mtime><f:mtime-version xmlns:f="urn:ferry:">"e"</f:mtime-version>"#,
        #"<D:mtime>1650000000.25</D:mtime><D:mtime-version>"e"</D:mtime-version>"#,
        #"<f:mtime xmlns:f="urn:other:">1650000000.25</f:mtime><f:mtime-version xmlns:f="urn:other:">"e"</f:mtime-version>"#,
    ])
    func ignored(properties: String) throws {
        let xml = multistatus("""
            <D:response><D:href>/dav/photos/2024%20Alps/a.jpg</D:href><D:propstat><D:prop>\
            <D:resourcetype/><D:getcontentlength>6</D:getcontentlength><D:getlastmodified>\(march5)</D:getlastmodified>\
            <D:getetag>"e"</D:getetag>\(properties)</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            """)
        #expect(try listAlps(xml).children.first?.modifiedNanos == march5Nanos)
    }

    @Test("folders keep the server's time even with the properties")
    func foldersIgnoreIt() throws {
        let xml = multistatus("""
            <D:response><D:href>/dav/photos/2024%20Alps/sub/</D:href><D:propstat><D:prop>\
            <D:resourcetype><D:collection/></D:resourcetype><D:getlastmodified>\(march5)</D:getlastmodified>\
            <f:mtime xmlns:f="urn:ferry:">1650000000.25</f:mtime><f:mtime-version xmlns:f="urn:ferry:">0 \(march5Nanos / 1_000_000_000)</f:mtime-version>\
            </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            """)
        #expect(try listAlps(xml).children.first?.modifiedNanos == march5Nanos)
    }

    // MARK: PROPPATCH answers

    @Test("a PROPPATCH answer counts as stored only when every property's status is 2xx", arguments: [
        (#"<D:propstat><D:prop><f:mtime/><f:mtime-version/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>"#, true),
        (#"<D:propstat><D:prop><f:mtime/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>"#
         + #"<D:propstat><D:prop><f:mtime-version/></D:prop><D:status>HTTP/1.1 403 Forbidden</D:status></D:propstat>"#, false),
        (#"<D:propstat><D:prop><f:mtime/></D:prop><D:status>HTTP/1.1 424 Failed Dependency</D:status></D:propstat>"#, false),
        (#"<D:status>HTTP/1.1 423 Locked</D:status>"#, false),
        (#"<D:propstat><D:prop><f:mtime/></D:prop></D:propstat>"#, false),
        (#"<D:propstat><D:prop><f:mtime/></D:prop><D:status>garbage</D:status></D:propstat>"#, false),
    ])
    func propPatchAnswers(inner: String, stored: Bool) {
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <D:multistatus xmlns:D="DAV:" xmlns:f="urn:ferry:"><D:response><D:href>/dav/a.jpg</D:href>\(inner)</D:response></D:multistatus>
            """
        #expect(PropPatchResponse.allPropertiesSet(Data(body.utf8)) == stored)
    }

    @Test("a PROPPATCH answer with a DTD, broken XML or nothing is not success", arguments: [
        #"<?xml version="1.0"?><!DOCTYPE m [<!ENTITY x "y">]><D:multistatus xmlns:D="DAV:"><D:response><D:status>HTTP/1.1 200 OK</D:status></D:response></D:multistatus>"#,
        #"<D:multistatus xmlns:D="DAV:"><D:response><D:status>HTTP/1.1 200 OK</D:status></D:response>"#,
        "",
        "<html>405 Not Allowed</html>",
    ])
    func propPatchRefusals(body: String) {
        #expect(!PropPatchResponse.allPropertiesSet(Data(body.utf8)))
    }
}
