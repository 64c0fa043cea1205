import FerryPluginAPI
import Foundation
import Testing

@testable import WebDAVBackend

/// The folder most tests list: `photos/2024 Alps` below a WebDAV root at `/dav/`.
let alps: RelativePath = {
    do { return try RelativePath("photos/2024 Alps") } catch { fatalError("\(error)") }
}()
let alpsRequestPath = "/dav/photos/2024%20Alps/"

/// `Tue, 05 Mar 2024 10:11:12 GMT` in nanoseconds.
let march5Nanos: Int64 = 1_709_633_472 * 1_000_000_000
let march5 = "Tue, 05 Mar 2024 10:11:12 GMT"

func listAlps(_ xml: String, limits: ListingLimits = ListingLimits()) throws(BackendError) -> DAVListing {
    try MultistatusParser.parse(Data(xml.utf8), requestPath: alpsRequestPath, directory: alps, limits: limits)
}

func path(_ string: String) -> RelativePath {
    do { return try RelativePath(string) } catch { fatalError("\(error)") }
}

/// A `<multistatus>` with `D:` prefixes around the given responses.
func multistatus(_ responses: String...) -> String {
    """
    <?xml version="1.0" encoding="utf-8"?>
    <D:multistatus xmlns:D="DAV:">
    \(responses.joined(separator: "\n"))
    </D:multistatus>
    """
}

/// A response for a file, in the style nginx and Apache use.
func fileResponse(_ href: String, size: String = "6", modified: String = march5, etag: String? = nil) -> String {
    let etagElement = etag.map { "<D:getetag>\($0)</D:getetag>" } ?? ""
    return """
    <D:response><D:href>\(href)</D:href><D:propstat><D:prop>\
    <D:resourcetype/><D:getcontentlength>\(size)</D:getcontentlength>\
    <D:getlastmodified>\(modified)</D:getlastmodified>\(etagElement)\
    </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
    """
}

/// A response for a folder.
func folderResponse(_ href: String, etag: String? = nil) -> String {
    let etagElement = etag.map { "<D:getetag>\($0)</D:getetag>" } ?? ""
    return """
    <D:response><D:href>\(href)</D:href><D:propstat><D:prop>\
    <D:resourcetype><D:collection/></D:resourcetype><D:getlastmodified>\(march5)</D:getlastmodified>\(etagElement)\
    </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
    """
}

/// Parses and expects a refusal: `.protocolViolation`, naming the listed folder.
@discardableResult
func expectRefusal(_ xml: String, limits: ListingLimits = ListingLimits(), mentioning fragment: String? = nil,
                   sourceLocation: SourceLocation = #_sourceLocation) -> BackendError? {
    expectRefusal(Data(xml.utf8), limits: limits, mentioning: fragment, sourceLocation: sourceLocation)
}

@discardableResult
func expectRefusal(_ body: Data, limits: ListingLimits = ListingLimits(), mentioning fragment: String? = nil,
                   sourceLocation: SourceLocation = #_sourceLocation) -> BackendError? {
    do {
        let listing = try MultistatusParser.parse(body, requestPath: alpsRequestPath, directory: alps, limits: limits)
        Issue.record("expected a refusal, got \(listing.children.count) children", sourceLocation: sourceLocation)
        return nil
    } catch {
        #expect(error.code == .protocolViolation, "\(error)", sourceLocation: sourceLocation)
        #expect(error.path == alps.description, sourceLocation: sourceLocation)
        #expect(!error.isRetryable, sourceLocation: sourceLocation)
        if let fragment {
            #expect(error.message.contains(fragment), "\(error.message)", sourceLocation: sourceLocation)
        }
        return error
    }
}
