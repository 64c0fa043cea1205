import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

@testable import ExecBackend

/// What travels on the pipe, decoded and checked without a process.
@Suite("Plugin wire format")
struct PluginWireFormatTests {
    func message(_ json: String) throws -> PluginMessage {
        try #require(PluginMessage.decode(Array(json.utf8)))
    }

    @Test("requests use the protocol's field names, leave out what is unset, and do not escape slashes")
    func requestEncoding() throws {
        var request = PluginRequest(id: 4, op: "upload")
        request.path = "2024/a b.jpg"
        request.source = "/home/ann/a b.jpg"
        request.modifiedNanos = 1_700_000_000_500_000_000
        request.resume = true
        let object = try #require(try JSONSerialization.jsonObject(with: request.line()) as? [String: Any])
        #expect(object["op"] as? String == "upload")
        #expect(object["modified_ns"] as? Int64 == 1_700_000_000_500_000_000)
        #expect(object["path"] as? String == "2024/a b.jpg")
        #expect(object["offset"] == nil && object["protocol"] == nil)
        #expect(!String(decoding: request.line(), as: UTF8.self).contains("\\/"))
        #expect(request.line().last == 0x0A)
    }

    @Test("a hello: versions, known and unknown capabilities, a clamped concurrency")
    func hello() throws {
        let hello = try PluginHello(message("""
            {"type":"hello","protocol":{"min":1,"max":3},"name":"s3","version":"2.1",
             "capabilities":["ranged-download","etags","teleport"],"max_concurrency":100000}
            """), fallbackName: "x")
        #expect(hello.protocolVersions == 1...3)
        #expect(hello.capabilities.rangedDownload && hello.capabilities.listingHasETags)
        #expect(!hello.capabilities.serverSideMove)
        #expect(hello.unknownCapabilities == ["teleport"])
        #expect(hello.maxConcurrency == 256)
        #expect(throws: BackendError.self) { try PluginHello(message(#"{"type":"reply","id":1}"#), fallbackName: "x") }
        #expect(throws: BackendError.self) {
            try PluginHello(message(#"{"type":"hello","protocol":{"min":3,"max":1}}"#), fallbackName: "x")
        }
    }

    @Test("error classes and codes become backend errors; without a class the code decides")
    func errors() throws {
        let retryable = WireError(code: "not_found", errorClass: "retryable", message: "later")
            .backendError(plugin: "p", operation: "stat", path: "a")
        #expect(retryable.code == .notFound && retryable.isRetryable)
        let byCode = WireError(code: "throttled", errorClass: nil, message: nil).backendError(plugin: "p", operation: "list", path: nil)
        #expect(byCode.code == .throttled && byCode.isRetryable)
        #expect(byCode.message == "p failed to list")
        let unknown = WireError(code: "cosmic_rays", errorClass: "permanent", message: "m").backendError(plugin: "p", operation: "x", path: nil)
        #expect(unknown.code == .io && !unknown.isRetryable)
        #expect(unknown.cause?.contains("cosmic_rays") == true)
    }

    @Test("entries with hostile or incomplete fields are refused", arguments: [
        #"{"path":"../etc/passwd","kind":"file","size":1}"#,
        #"{"path":"a\u0000b","kind":"file","size":1}"#,
        #"{"path":"a","kind":"file"}"#,
        #"{"path":"a","kind":"file","size":-5}"#,
        #"{"path":"a","kind":"symlink","size":1}"#,
    ])
    func hostileEntries(_ json: String) throws {
        let entry = try JSONDecoder().decode(WireEntry.self, from: Data(json.utf8))
        #expect(throws: BackendError.self) { try entry.remoteEntry() }
    }

    @Test("lines that are not messages do not decode; unknown fields are ignored")
    func decoding() throws {
        #expect(PluginMessage.decode(Array("hello world".utf8)) == nil)
        #expect(PluginMessage.decode(Array(#"{"id":1}"#.utf8)) == nil)
        let reply = try message(#"{"type":"reply","id":7,"ok":true,"entry":null,"future":{"x":1}}"#)
        #expect(reply.id == 7 && reply.ok == true && reply.entry == nil)
    }

    @Test("plugin names cannot reach outside a folder; discovery takes the first folder's copy")
    func discovery() throws {
        #expect(PluginExecutable.isValidName("s3-backup_2.0"))
        for bad in ["", "../x", "a/b", ".hidden", "é"] { #expect(!PluginExecutable.isValidName(bad), "\(bad)") }
        let first = TemporaryDirectory("ferry-plugins-a")
        let second = TemporaryDirectory("ferry-plugins-b")
        for folder in [first, second] {
            try "#!/bin/sh\n".write(toFile: folder.child("ferry-backend-one"), atomically: true, encoding: .utf8)
            chmod(folder.child("ferry-backend-one"), 0o755)
        }
        try "not executable".write(toFile: second.child("ferry-backend-two"), atomically: true, encoding: .utf8)
        let found = PluginExecutable.discover(in: [first.path, second.path, "/nonexistent"])
        #expect(found.map(\.name) == ["one"])
        #expect(found.first?.path == first.child("ferry-backend-one"))
        #expect(PluginExecutable.find("two", in: [second.path]) == nil)
        let folders = PluginExecutable.searchFolders(extra: ["/x"], environment: [
            "FERRY_PLUGIN_PATH": "/a:/b", "HOME": "/home/ann", "PATH": "/usr/bin:/a"])
        #expect(folders == ["/x", "/a", "/b", "/home/ann/.config/ferry/plugins", "/usr/bin"])
    }
}
