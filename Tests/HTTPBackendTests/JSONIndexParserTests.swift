import FerryPluginAPI
import Foundation
import Testing

@testable import HTTPBackend

@Suite("nginx JSON folder indexes")
struct JSONIndexParserTests {
    static let alps = try! RelativePath("photos/Alps 2024")

    static func parse(_ json: String, limits: IndexLimits = IndexLimits()) throws(BackendError) -> [IndexEntry] {
        try JSONIndexParser.parse(Data(json.utf8), directory: alps, limits: limits)
    }

    /// Expects the whole index to be refused, naming the folder and, if given, a fragment.
    static func expectRefusal(_ json: String, limits: IndexLimits = IndexLimits(), mentioning fragment: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let entries = try parse(json, limits: limits)
            Issue.record("accepted: \(entries.map(\.name))", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .protocolViolation, sourceLocation: sourceLocation)
            #expect(error.path == alps.description, sourceLocation: sourceLocation)
            #expect(error.message.hasPrefix("refusing the folder index: "), sourceLocation: sourceLocation)
            #expect(error.message.contains(fragment), "\(error.message)", sourceLocation: sourceLocation)
            #expect(!error.isRetryable, sourceLocation: sourceLocation)
        }
    }

    @Test("nginx's real index: names as they are, sizes, dates, the subfolder")
    func nginxSample() throws {
        let entries = try Self.parse(ServerSamples.nginxJSON)
        #expect(Set(entries.filter { $0.kind == .file }.map(\.name)) == ServerSamples.fileNames)
        #expect(Set(entries.filter { $0.kind == .directory }.map(\.name)) == ServerSamples.folderNames)
        #expect(entries.allSatisfy { $0.modifiedNanos == ServerSamples.modified })
        let sizes = Dictionary(uniqueKeysWithValues: entries.map { ($0.name, $0.size) })
        #expect(sizes["IMG 0001.jpg"] == 1234)
        #expect(sizes["100% done.gpx"] == 0)
        #expect(sizes["été 日本.jpg"] == 2)
        #expect(sizes["raw files"] == .some(nil))
    }

    @Test("an empty folder, unknown keys, a missing date, and special files skipped")
    func tolerated() throws {
        #expect(try Self.parse("[]").isEmpty)
        #expect(try Self.parse(" \n[ ]\n").isEmpty)
        let entries = try Self.parse("""
            [{ "name":"a.jpg", "type":"file", "size":5, "mode":"0644", "owner":{"uid":1} },
             { "name":"fifo", "type":"other", "mtime":"Fri, 01 Mar 2024 10:00:00 GMT" }]
            """)
        #expect(entries == [IndexEntry(name: "a.jpg", kind: .file, size: 5, modifiedNanos: nil)])
    }

    @Test("hostile names are refused", arguments: [
        (#"[{"name":"..","type":"directory"}]"#, "not a valid file name"),
        (#"[{"name":".","type":"directory"}]"#, "not a valid file name"),
        (#"[{"name":"","type":"file","size":1}]"#, "not a valid file name"),
        (#"[{"name":"../../etc/passwd","type":"file","size":1}]"#, "not a valid file name"),
        (#"[{"name":"a/b.jpg","type":"file","size":1}]"#, "not a valid file name"),
        (#"[{"name":"nul\u0000.jpg","type":"file","size":1}]"#, "not a valid file name"),
        (#"[{"name":"line\nbreak.jpg","type":"file","size":1}]"#, "not a valid file name"),
        (#"[{"name":"del\u007f.jpg","type":"file","size":1}]"#, "not a valid file name"),
        (#"[{"name":"a.jpg","type":"file","size":1},{"name":"a.jpg","type":"directory"}]"#, "appears twice"),
    ])
    func hostileNames(json: String, fragment: String) {
        Self.expectRefusal(json, mentioning: fragment)
    }

    @Test("malformed entries are refused", arguments: [
        (#"{"name":"a.jpg","type":"file","size":1}"#, "not an array"),
        (#"[{"name":"a.jpg","type":"file","size":1}"#, "not valid JSON"),
        ("<html><body>Index</body></html>", "not valid JSON"),
        ("", "not valid JSON"),
        (#"[{"type":"file","size":1}]"#, "has no \"name\""),
        (#"[{"name":"a.jpg","size":1}]"#, "has no \"type\""),
        (#"[{"name":"a.jpg","type":"symlink"}]"#, "unknown type"),
        (#"[{"name":"a.jpg","type":"file"}]"#, "has no valid size"),
        (#"[{"name":"a.jpg","type":"file","size":-1}]"#, "has no valid size"),
        (#"[{"name":"a.jpg","type":"file","size":"12"}]"#, "entry 1, size has the wrong type"),
        (#"[{"name":"a.jpg","type":"file","size":1.5}]"#, "malformed"),
        (#"[{"name":"a.jpg","type":"file","size":99999999999999999999}]"#, "malformed"),
        (#"[{"name":42,"type":"file","size":1}]"#, "entry 1, name has the wrong type"),
        (#"[{"name":"a.jpg","type":"file","size":1,"mtime":"yesterday"}]"#, "unreadable date"),
        (#"[null]"#, "entry 1"),
    ])
    func malformed(json: String, fragment: String) {
        Self.expectRefusal(json, mentioning: fragment)
    }

    @Test("deep nesting is refused, not a crash")
    func deepNesting() {
        let depth = 100_000
        Self.expectRefusal(String(repeating: "[", count: depth) + String(repeating: "]", count: depth),
                           mentioning: "malformed")
    }

    @Test("the byte and entry limits hold")
    func limits() throws {
        let three = #"[{"name":"a","type":"file","size":1},{"name":"b","type":"file","size":1},{"name":"c","type":"directory"}]"#
        #expect(try Self.parse(three, limits: IndexLimits(maxEntries: 3)).count == 3)
        Self.expectRefusal(three, limits: IndexLimits(maxEntries: 2), mentioning: "more than 2 entries")
        #expect(try Self.parse(three, limits: IndexLimits(maxBytes: three.utf8.count)).count == 3)
        Self.expectRefusal(three, limits: IndexLimits(maxBytes: three.utf8.count - 1), mentioning: "more than the limit")
    }

    @Test("a large index parses")
    func large() throws {
        let items = (0..<50_000).map { #"{ "name":"IMG_\#($0).jpg", "type":"file", "mtime":"Fri, 01 Mar 2024 10:00:00 GMT", "size":\#($0) }"# }
        let entries = try Self.parse("[\n" + items.joined(separator: ",\n") + "\n]")
        #expect(entries.count == 50_000)
        #expect(entries.last == IndexEntry(name: "IMG_49999.jpg", kind: .file, size: 49_999, modifiedNanos: ServerSamples.modified))
    }
}
