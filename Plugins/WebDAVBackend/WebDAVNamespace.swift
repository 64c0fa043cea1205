/// The XML namespace of WebDAV properties (RFC 4918). Servers use any prefix for it
/// (`D:`, `d:`, `lp1:`, `ns0:`, none); only the namespace URI identifies an element.
enum WebDAVNamespace {
    static let uri = "DAV:"
}
