import CurlTransport
import Foundation
import Testing

@testable import HTTPBackend

@Suite("multipart/form-data bodies")
struct MultipartFormTests {
    @Test("fields, then the file part, then the closing delimiter; the file stays a file")
    func layout() throws {
        let form = MultipartForm(boundary: "XyZ")
        #expect(form.contentType == "multipart/form-data; boundary=XyZ")
        let parts = form.parts(fields: [(name: "path", value: "/photos/été 1.jpg")], fileField: "file",
                               fileName: "été 1.jpg", content: .file(path: "/tmp/src", offset: 0, length: 5))
        try #require(parts.count == 3)
        guard case let .data(head) = parts[0], case let .file(path, offset, length) = parts[1],
              case let .data(tail) = parts[2] else {
            Issue.record("unexpected parts \(parts)")
            return
        }
        #expect(String(decoding: head, as: UTF8.self) == """
            --XyZ\r
            Content-Disposition: form-data; name="path"\r
            \r
            /photos/été 1.jpg\r
            --XyZ\r
            Content-Disposition: form-data; name="file"; filename="été 1.jpg"\r
            Content-Type: application/octet-stream\r
            \r

            """)
        #expect(path == "/tmp/src" && offset == 0 && length == 5)
        #expect(String(decoding: tail, as: UTF8.self) == "\r\n--XyZ--\r\n")
    }

    @Test("quotes and line breaks in names are escaped as browsers do")
    func quoting() {
        #expect(MultipartForm.quoted(#"it's "quoted".jpg"#) == "it's %22quoted%22.jpg")
        #expect(MultipartForm.quoted("a\r\nb") == "a%0D%0Ab")
        #expect(MultipartForm.quoted("100% plain") == "100% plain")
    }

    @Test("boundaries are random and long")
    func boundaries() {
        let first = MultipartForm().boundary, second = MultipartForm().boundary
        #expect(first != second)
        #expect(first.hasPrefix("ferry-") && first.count == 6 + 32)
    }
}
