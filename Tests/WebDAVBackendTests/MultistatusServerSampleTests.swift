import FerryPluginAPI
import Foundation
import Testing

@testable import WebDAVBackend

/// Listings as real servers send them. The nginx, Apache and rclone bodies were captured
/// on loopback (`PROPFIND Depth: 1` with the backend's own request body) from a folder
/// holding `IMG 0001.jpg`, `a&b+c%d#e?f.txt`, `~tilde`, `Ünïcødé ✓.gpx` and `sub/`;
/// only the dates were changed.
@Suite("Multistatus listings from real servers")
struct MultistatusServerSampleTests {
    /// The five children every captured sample describes, sorted by path.
    static let expectedNames = ["IMG 0001.jpg", "a&b+c%d#e?f.txt", "sub", "~tilde", "Ünïcødé ✓.gpx"]

    static func expectAlpsChildren(_ listing: DAVListing, etags: [String: String?] = [:],
                                   sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(listing.children.map(\.path.name) == expectedNames, sourceLocation: sourceLocation)
        #expect(listing.children.allSatisfy { $0.path.parent == alps }, sourceLocation: sourceLocation)
        let byName = Dictionary(uniqueKeysWithValues: listing.children.map { ($0.path.name, $0) })
        #expect(byName["IMG 0001.jpg"]?.kind == .file, sourceLocation: sourceLocation)
        #expect(byName["IMG 0001.jpg"]?.size == 6, sourceLocation: sourceLocation)
        #expect(byName["a&b+c%d#e?f.txt"]?.size == 1000, sourceLocation: sourceLocation)
        #expect(byName["~tilde"]?.size == 0, sourceLocation: sourceLocation)
        #expect(byName["Ünïcødé ✓.gpx"]?.size == 2, sourceLocation: sourceLocation)
        #expect(byName["sub"]?.kind == .directory, sourceLocation: sourceLocation)
        #expect(byName["sub"]?.size == 0, sourceLocation: sourceLocation)
        #expect(listing.children.allSatisfy { $0.modifiedNanos == march5Nanos }, sourceLocation: sourceLocation)
        for (name, etag) in etags {
            #expect(byName[name]?.etag == etag, "\(name)", sourceLocation: sourceLocation)
        }
    }

    // nginx 1.22 + dav-ext 3.0: `D:` prefix, absolute-path hrefs, no getetag at all (not even under 404).
    static let nginx = #"""
        <?xml version="1.0" encoding="utf-8" ?>
        <D:multistatus xmlns:D="DAV:">
        <D:response>
        <D:href>/dav/photos/2024%20Alps/</D:href>
        <D:propstat>
        <D:prop>
        <D:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</D:getlastmodified>
        <D:resourcetype><D:collection/></D:resourcetype>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        </D:response>
        <D:response>
        <D:href>/dav/photos/2024%20Alps/a&amp;b+c%25d%23e%3Ff.txt</D:href>
        <D:propstat>
        <D:prop>
        <D:getcontentlength>1000</D:getcontentlength>
        <D:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</D:getlastmodified>
        <D:resourcetype></D:resourcetype>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        </D:response>
        <D:response>
        <D:href>/dav/photos/2024%20Alps/~tilde</D:href>
        <D:propstat>
        <D:prop>
        <D:getcontentlength>0</D:getcontentlength>
        <D:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</D:getlastmodified>
        <D:resourcetype></D:resourcetype>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        </D:response>
        <D:response>
        <D:href>/dav/photos/2024%20Alps/%C3%9Cn%C3%AFc%C3%B8d%C3%A9%20%E2%9C%93.gpx</D:href>
        <D:propstat>
        <D:prop>
        <D:getcontentlength>2</D:getcontentlength>
        <D:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</D:getlastmodified>
        <D:resourcetype></D:resourcetype>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        </D:response>
        <D:response>
        <D:href>/dav/photos/2024%20Alps/sub/</D:href>
        <D:propstat>
        <D:prop>
        <D:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</D:getlastmodified>
        <D:resourcetype><D:collection/></D:resourcetype>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        </D:response>
        <D:response>
        <D:href>/dav/photos/2024%20Alps/IMG%200001.jpg</D:href>
        <D:propstat>
        <D:prop>
        <D:getcontentlength>6</D:getcontentlength>
        <D:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</D:getlastmodified>
        <D:resourcetype></D:resourcetype>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        </D:response>
        </D:multistatus>
        """#

    // Apache 2.4 mod_dav_fs: properties under `lp1:`/`g0:` prefixes declared on each response,
    // lower-case percent-encoding, a 404 propstat for folders' getcontentlength. Apache marks an
    // ETag weak (`W/"…"`) when the file changed within the last second; one entry here is weak.
    static let apache = #"""
        <?xml version="1.0" encoding="utf-8"?>
        <D:multistatus xmlns:D="DAV:" xmlns:ns0="DAV:">
        <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/" xmlns:g0="DAV:">
        <D:href>/dav/photos/2024%20Alps/</D:href>
        <D:propstat>
        <D:prop>
        <lp1:resourcetype><D:collection/></lp1:resourcetype>
        <lp1:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</lp1:getlastmodified>
        <lp1:getetag>"1000-660d8fc9b069c"</lp1:getetag>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        <D:propstat>
        <D:prop>
        <g0:getcontentlength/>
        </D:prop>
        <D:status>HTTP/1.1 404 Not Found</D:status>
        </D:propstat>
        </D:response>
        <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
        <D:href>/dav/photos/2024%20Alps/a&amp;b+c%25d%23e%3ff.txt</D:href>
        <D:propstat>
        <D:prop>
        <lp1:resourcetype/>
        <lp1:getcontentlength>1000</lp1:getcontentlength>
        <lp1:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</lp1:getlastmodified>
        <lp1:getetag>"3e8-660d8fc9b069c"</lp1:getetag>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        </D:response>
        <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
        <D:href>/dav/photos/2024%20Alps/~tilde</D:href>
        <D:propstat>
        <D:prop>
        <lp1:resourcetype/>
        <lp1:getcontentlength>0</lp1:getcontentlength>
        <lp1:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</lp1:getlastmodified>
        <lp1:getetag>"0-660d8fc9b069c"</lp1:getetag>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        </D:response>
        <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
        <D:href>/dav/photos/2024%20Alps/%c3%9cn%c3%afc%c3%b8d%c3%a9%20%e2%9c%93.gpx</D:href>
        <D:propstat>
        <D:prop>
        <lp1:resourcetype/>
        <lp1:getcontentlength>2</lp1:getcontentlength>
        <lp1:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</lp1:getlastmodified>
        <lp1:getetag>"2-660d8fc9b069c"</lp1:getetag>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        </D:response>
        <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/" xmlns:g0="DAV:">
        <D:href>/dav/photos/2024%20Alps/sub/</D:href>
        <D:propstat>
        <D:prop>
        <lp1:resourcetype><D:collection/></lp1:resourcetype>
        <lp1:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</lp1:getlastmodified>
        <lp1:getetag>"1000-660d8fc9afbe2"</lp1:getetag>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        <D:propstat>
        <D:prop>
        <g0:getcontentlength/>
        </D:prop>
        <D:status>HTTP/1.1 404 Not Found</D:status>
        </D:propstat>
        </D:response>
        <D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
        <D:href>/dav/photos/2024%20Alps/IMG%200001.jpg</D:href>
        <D:propstat>
        <D:prop>
        <lp1:resourcetype/>
        <lp1:getcontentlength>6</lp1:getcontentlength>
        <lp1:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</lp1:getlastmodified>
        <lp1:getetag>W/"6-660d8fc9afbe2"</lp1:getetag>
        </D:prop>
        <D:status>HTTP/1.1 200 OK</D:status>
        </D:propstat>
        </D:response>
        </D:multistatus>
        """#

    // rclone 1.60 `serve webdav` (Go's x/net/webdav): one line, the root at `/`, empty
    // getcontentlength and getetag under 404 for folders, `xmlns:D` declared again on `<D:collection>`.
    static let rclone = #"""
        <?xml version="1.0" encoding="UTF-8"?><D:multistatus xmlns:D="DAV:"><D:response><D:href>/photos/2024%20Alps/</D:href><D:propstat><D:prop><D:resourcetype><D:collection xmlns:D="DAV:"/></D:resourcetype><D:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</D:getlastmodified></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat><D:propstat><D:prop><D:getcontentlength></D:getcontentlength><D:getetag></D:getetag></D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat></D:response><D:response><D:href>/photos/2024%20Alps/IMG%200001.jpg</D:href><D:propstat><D:prop><D:resourcetype></D:resourcetype><D:getcontentlength>6</D:getcontentlength><D:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</D:getlastmodified><D:getetag>"18ea4f9abd67ee756"</D:getetag></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response><D:response><D:href>/photos/2024%20Alps/a&amp;b+c%25d%23e%3Ff.txt</D:href><D:propstat><D:prop><D:resourcetype></D:resourcetype><D:getcontentlength>1000</D:getcontentlength><D:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</D:getlastmodified><D:getetag>"18ea4f9abd91d3713e8"</D:getetag></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response><D:response><D:href>/photos/2024%20Alps/sub/</D:href><D:propstat><D:prop><D:resourcetype><D:collection xmlns:D="DAV:"/></D:resourcetype><D:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</D:getlastmodified></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat><D:propstat><D:prop><D:getcontentlength></D:getcontentlength><D:getetag></D:getetag></D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat></D:response><D:response><D:href>/photos/2024%20Alps/~tilde</D:href><D:propstat><D:prop><D:resourcetype></D:resourcetype><D:getcontentlength>0</D:getcontentlength><D:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</D:getlastmodified><D:getetag>"18ea4f9abd91d3710"</D:getetag></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response><D:response><D:href>/photos/2024%20Alps/%C3%9Cn%C3%AFc%C3%B8d%C3%A9%20%E2%9C%93.gpx</D:href><D:propstat><D:prop><D:resourcetype></D:resourcetype><D:getcontentlength>2</D:getcontentlength><D:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</D:getlastmodified><D:getetag>"18ea4f9abd91d3712"</D:getetag></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>
        """#

    @Test("nginx + dav-ext")
    func nginxListing() throws {
        let listing = try listAlps(Self.nginx)
        #expect(listing.collectionETag == nil)
        Self.expectAlpsChildren(listing)
        #expect(listing.children.allSatisfy { $0.etag == nil })
    }

    @Test("Apache mod_dav, strong and weak ETags")
    func apacheListing() throws {
        let listing = try listAlps(Self.apache)
        #expect(listing.collectionETag == #""1000-660d8fc9b069c""#)
        Self.expectAlpsChildren(listing, etags: [
            "IMG 0001.jpg": #"W/"6-660d8fc9afbe2""#,
            "a&b+c%d#e?f.txt": #""3e8-660d8fc9b069c""#,
            "sub": #""1000-660d8fc9afbe2""#,
        ])
    }

    @Test("rclone serve webdav (Go x/net/webdav)")
    func rcloneListing() throws {
        let listing = try MultistatusParser.parse(Data(Self.rclone.utf8), requestPath: "/photos/2024%20Alps/",
                                                  directory: alps, limits: ListingLimits())
        #expect(listing.collectionETag == nil)
        Self.expectAlpsChildren(listing, etags: ["IMG 0001.jpg": #""18ea4f9abd67ee756""#, "sub": nil])
    }

    // ownCloud/Nextcloud (sabre/dav) and lighttpd style: `d:` prefix, full URLs with host and
    // port, vendor properties, everything missing reported under 404, an unquoted ETag.
    static let ownCloud = #"""
        <?xml version="1.0"?>
        <d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns">
         <d:response>
          <d:href>http://127.0.0.1:8080/remote.php/dav/files/alice/Photos/2024%20Alps/</d:href>
          <d:propstat>
           <d:prop>
            <d:resourcetype><d:collection/></d:resourcetype>
            <d:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</d:getlastmodified>
            <d:getetag>&quot;65e6f0a0c1d2e&quot;</d:getetag>
            <oc:size>1006</oc:size>
           </d:prop>
           <d:status>HTTP/1.1 200 OK</d:status>
          </d:propstat>
          <d:propstat>
           <d:prop><d:getcontentlength/></d:prop>
           <d:status>HTTP/1.1 404 Not Found</d:status>
          </d:propstat>
         </d:response>
         <d:response>
          <d:href>http://127.0.0.1:8080/remote.php/dav/files/alice/Photos/2024%20Alps/IMG%200001.jpg</d:href>
          <d:propstat>
           <d:prop>
            <d:resourcetype/>
            <d:getcontentlength>6</d:getcontentlength>
            <d:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</d:getlastmodified>
            <d:getetag>
              &quot;b1946ac92492d2347c6235b4d2611184&quot;
            </d:getetag>
            <oc:fileid>00000042ocabcdef</oc:fileid>
           </d:prop>
           <d:status>HTTP/1.1 200 OK</d:status>
          </d:propstat>
         </d:response>
         <d:response>
          <d:href>https://cloud.example.org:8443/remote.php/dav/files/alice/Photos/2024%20Alps/track%2B1.gpx</d:href>
          <d:propstat>
           <d:prop>
            <d:resourcetype/>
            <d:getcontentlength>1000</d:getcontentlength>
            <d:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</d:getlastmodified>
            <d:getetag>5f3e2a1b</d:getetag>
           </d:prop>
           <d:status>HTTP/1.1 200 OK</d:status>
          </d:propstat>
         </d:response>
         <d:response>
          <d:href>http://127.0.0.1:8080/remote.php/dav/files/alice/Photos/2024%20Alps/Thumbnails/</d:href>
          <d:propstat>
           <d:prop>
            <d:resourcetype><d:collection/></d:resourcetype>
            <d:getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</d:getlastmodified>
           </d:prop>
           <d:status>HTTP/1.1 200 OK</d:status>
          </d:propstat>
          <d:propstat>
           <d:prop><d:getcontentlength/><d:getetag/></d:prop>
           <d:status>HTTP/1.1 404 Not Found</d:status>
          </d:propstat>
         </d:response>
        </d:multistatus>
        """#

    @Test("ownCloud / lighttpd style: full URLs, d: prefix, 404 propstats")
    func ownCloudListing() throws {
        let listing = try MultistatusParser.parse(
            Data(Self.ownCloud.utf8), requestPath: "/remote.php/dav/files/alice/Photos/2024%20Alps/",
            directory: path("Photos/2024 Alps"), limits: ListingLimits())
        #expect(listing.collectionETag == #""65e6f0a0c1d2e""#)
        #expect(listing.children == [
            RemoteEntry(path: path("Photos/2024 Alps/IMG 0001.jpg"), kind: .file, size: 6, modifiedNanos: march5Nanos,
                        etag: #""b1946ac92492d2347c6235b4d2611184""#),
            RemoteEntry(path: path("Photos/2024 Alps/Thumbnails"), kind: .directory, size: 0, modifiedNanos: march5Nanos,
                        etag: nil),
            RemoteEntry(path: path("Photos/2024 Alps/track+1.gpx"), kind: .file, size: 1000, modifiedNanos: march5Nanos,
                        etag: "5f3e2a1b"),
        ])
    }

    /// The same listing with the DAV: namespace bound to the prefixes servers use, or as the default namespace.
    static func prefixed(_ prefix: String) -> String {
        let p = prefix.isEmpty ? "" : prefix + ":"
        let declaration = prefix.isEmpty ? #"xmlns="DAV:""# : #"xmlns:\#(prefix)="DAV:""#
        return #"""
            <?xml version="1.0" encoding="utf-8"?>
            <\#(p)multistatus \#(declaration)>
            <\#(p)response><\#(p)href>/dav/photos/2024%20Alps/</\#(p)href><\#(p)propstat><\#(p)prop>\#
            <\#(p)resourcetype><\#(p)collection/></\#(p)resourcetype><\#(p)getetag>"dir-1"</\#(p)getetag>\#
            </\#(p)prop><\#(p)status>HTTP/1.1 200 OK</\#(p)status></\#(p)propstat></\#(p)response>
            <\#(p)response><\#(p)href>/dav/photos/2024%20Alps/b.jpg</\#(p)href><\#(p)propstat><\#(p)prop>\#
            <\#(p)resourcetype/><\#(p)getcontentlength>10</\#(p)getcontentlength>\#
            <\#(p)getlastmodified>Tue, 05 Mar 2024 10:11:12 GMT</\#(p)getlastmodified><\#(p)getetag>"b-1"</\#(p)getetag>\#
            </\#(p)prop><\#(p)status>HTTP/1.1 200 OK</\#(p)status></\#(p)propstat></\#(p)response>
            <\#(p)response><\#(p)href>/dav/photos/2024%20Alps/a/</\#(p)href><\#(p)propstat><\#(p)prop>\#
            <\#(p)resourcetype><\#(p)collection/></\#(p)resourcetype>\#
            </\#(p)prop><\#(p)status>HTTP/1.1 200 OK</\#(p)status></\#(p)propstat></\#(p)response>
            </\#(p)multistatus>
            """#
    }

    @Test("the namespace decides, not the prefix", arguments: ["D", "d", "lp1", "ns0", "a", ""])
    func prefixes(prefix: String) throws {
        let listing = try listAlps(Self.prefixed(prefix))
        #expect(listing == DAVListing(collectionETag: #""dir-1""#, children: [
            RemoteEntry(path: path("photos/2024 Alps/a"), kind: .directory, size: 0, modifiedNanos: nil),
            RemoteEntry(path: path("photos/2024 Alps/b.jpg"), kind: .file, size: 10, modifiedNanos: march5Nanos,
                        etag: #""b-1""#),
        ]))
    }

    @Test("elements of other namespaces are ignored even when their local names match")
    func foreignNamespaces() throws {
        let listing = try listAlps(multistatus(
            """
            <D:response xmlns:x="urn:example:evil">
             <x:href>/etc/passwd</x:href>
             <D:href>/dav/photos/2024%20Alps/a.jpg</D:href>
             <D:propstat><D:prop>
              <D:resourcetype><x:collection/></D:resourcetype>
              <x:getcontentlength>999</x:getcontentlength>
              <D:getcontentlength>7</D:getcontentlength>
              <x:getetag>"evil"</x:getetag>
             </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>
             <x:propstat><D:prop><D:getetag>"evil"</D:getetag></D:prop><D:status>HTTP/1.1 200 OK</D:status></x:propstat>
            </D:response>
            """))
        #expect(listing.children == [
            RemoteEntry(path: path("photos/2024 Alps/a.jpg"), kind: .file, size: 7, modifiedNanos: nil, etag: nil),
        ])
    }
}
