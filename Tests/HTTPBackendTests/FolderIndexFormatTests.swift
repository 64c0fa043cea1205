import Foundation
import Testing

@testable import HTTPBackend

@Suite("telling a JSON index from an HTML one")
struct FolderIndexFormatTests {
    @Test("by Content-Type first", arguments: [
        ("application/json", "<html>", FolderIndexFormat.json),
        ("application/json; charset=utf-8", "", .json),
        ("application/vnd.listing+json", "", .json),
        ("text/html", "[]", .html),
        ("Text/HTML; charset=UTF-8", "", .html),
        ("application/xhtml+xml", "", .html),
    ] as [(String, String, FolderIndexFormat)])
    func contentType(type: String, body: String, format: FolderIndexFormat) {
        #expect(FolderIndexFormat.detect(contentType: type, body: Data(body.utf8)) == format)
    }

    @Test("else by the first character", arguments: [
        (nil, "[\n{}]", FolderIndexFormat.json),
        ("text/plain", "  \n{ }", .json),
        ("application/octet-stream", "\u{FEFF}<html>", .html),
        (nil, "\r\n<!DOCTYPE html>", .html),
    ] as [(String?, String, FolderIndexFormat)])
    func sniffed(type: String?, body: String, format: FolderIndexFormat) {
        #expect(FolderIndexFormat.detect(contentType: type, body: Data(body.utf8)) == format)
    }

    @Test("neither", arguments: ["", "   ", "Index of /", "%PDF-1.4"])
    func neither(body: String) {
        #expect(FolderIndexFormat.detect(contentType: "text/plain", body: Data(body.utf8)) == nil)
    }
}
