import Testing

@testable import WebDAVBackend

@Test("the WebDAV namespace is DAV:")
func webDAVNamespace() {
    #expect(WebDAVNamespace.uri == "DAV:")
}
