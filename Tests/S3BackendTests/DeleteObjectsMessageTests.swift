import FerryPluginAPI
import Foundation
import Testing

@testable import S3Backend

/// DeleteObjects' request body and answers, as stores send them.
@Suite("S3 DeleteObjects messages")
struct DeleteObjectsMessageTests {
    @Test("the body asks quietly for each key, with XML's reserved characters escaped")
    func body() {
        let body = String(decoding: DeleteObjectsMessage.body(keys: ["p/a & b.jpg", "p/<odd>'\"name\".gpx", "p/ü.jpg"]), as: UTF8.self)
        #expect(body.contains("<Quiet>true</Quiet>"))
        #expect(body.contains("<Object><Key>p/a &amp; b.jpg</Key></Object>"))
        #expect(body.contains("<Object><Key>p/&lt;odd&gt;'\"name\".gpx</Key></Object>"))
        #expect(body.contains("<Object><Key>p/ü.jpg</Key></Object>"))
        #expect(body.hasSuffix("</Delete>"))
    }

    @Test("the body's keys read back as sent")
    func bodyRoundTrip() {
        let keys = ["a & b", "<c>", "d'\"e", "plain/key.jpg"]
        var read: [String] = []
        S3XMLReader.read(DeleteObjectsMessage.body(keys: keys)) { field in
            if field.path == ["Object", "Key"] { read.append(field.text) }
        }
        #expect(read == keys)
    }

    @Test("Content-MD5 is the base64 MD5 of the body")
    func contentMD5() {
        #expect(DeleteObjectsMessage.contentMD5(Data()) == "1B2M2Y8AsgTpgAmY7PhCfg==")
        #expect(DeleteObjectsMessage.contentMD5(Data("ferry".utf8)) == "RhcbB3mXsWa7MM9UlO/y+A==")
    }

    @Test("a quiet answer without errors names no key, whether empty or self-closed")
    func quietAnswer() throws {
        let empty = Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?><DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"></DeleteResult>".utf8)
        #expect(try DeleteObjectsMessage.failures(empty) == [])
        #expect(try DeleteObjectsMessage.failures(Data("<DeleteResult/>".utf8)) == [])
    }

    @Test("each <Error> gives its key, code and message; <Deleted> entries are not failures")
    func errors() throws {
        let answer = Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
            <Deleted><Key>p/gone.jpg</Key></Deleted>
            <Error><Key>p/a &amp; b.jpg</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>
            <Error><Key>p/busy.jpg</Key><Code>InternalError</Code><Message>try again</Message></Error>
            </DeleteResult>
            """.utf8)
        #expect(try DeleteObjectsMessage.failures(answer) == [
            .init(key: "p/a & b.jpg", code: "AccessDenied", message: "Access Denied"),
            .init(key: "p/busy.jpg", code: "InternalError", message: "try again"),
        ])
    }

    @Test("an answer that is not a DeleteResult is a protocol violation")
    func notADeleteResult() {
        #expect(throws: BackendError.self) {
            try DeleteObjectsMessage.failures(Data("<Error><Code>InternalError</Code></Error>".utf8))
        }
        #expect(throws: BackendError.self) { try DeleteObjectsMessage.failures(Data("not xml".utf8)) }
    }
}
