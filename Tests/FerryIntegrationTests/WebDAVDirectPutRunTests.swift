import FerryTestSupport
import Foundation
import Testing

/// What the direct PUT (one `PUT` to the final name where the server's own `PUT` is
/// atomic) changes for whole runs, counted on the wire.
@Suite("WebDAV direct PUT through the ferry command", .integration)
struct WebDAVDirectPutRunTests {
    static let files = 12

    func davURL(_ origin: String, _ path: String) -> String {
        "dav://" + origin.dropFirst("http://".count) + path
    }

    func writeFiles(_ root: String, round: Int) throws {
        for index in 0..<Self.files {
            try TreeGenerator.write(at: root + "/DCIM/IMG_\(index).jpg", size: 4096 + round, seed: UInt64(100 * round + index),
                                    modified: 1_700_000_000 + Double(1000 * round + index))
        }
    }

    /// `METHOD PATH` of requests, without the capability probe's (every run probes once).
    static func fileRequests(_ lines: some Sequence<String>) -> [(method: String, path: String)] {
        lines.compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 2, !fields[1].contains(".ferry-probe") else { return nil }
            return (String(fields[0]), String(fields[1]))
        }
    }

    static func isTemporary(_ path: String) -> Bool {
        path.split(separator: "/").last.map { $0.hasPrefix(".") && $0.hasSuffix(".ferry-part") } ?? false
    }

    /// A plain push replaces what it finds, so a new name needs no condition (nginx honours
    /// none on a PUT): it goes in one PUT too. A two-way sync keeps the condition
    /// (`syncKeepsTemporaryNames`).
    @Test("nginx: a push of new names and then of changed files is one PUT per file to its name and no MOVE (counted in nginx's log)")
    func nginxPushOfChangedFiles() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        let remote = davURL(server.origin, "/dav/photos")
        try writeFiles(work.source, round: 0)

        var mark = try await server.logMark()
        let first = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(first.status == 0, "\(first.diagnostics)")
        #expect(first.int("uploaded") == Self.files)
        var sent = Self.fileRequests(try await server.accessLogAfter(mark))
        let newNames = sent.filter { $0.method == "PUT" && $0.path.contains("/DCIM/") }
        #expect(newNames.count == Self.files && newNames.allSatisfy { !Self.isTemporary($0.path) }, "\(sent)")
        #expect(!sent.contains { $0.method == "MOVE" }, "\(sent)")

        try writeFiles(work.source, round: 1)
        mark = try await server.logMark()
        let second = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(second.int("uploaded") == Self.files)
        sent = Self.fileRequests(try await server.accessLogAfter(mark))
        let puts = sent.filter { $0.method == "PUT" && $0.path.contains("/DCIM/") }
        #expect(puts.count == Self.files && puts.allSatisfy { !Self.isTemporary($0.path) }, "\(sent)")
        #expect(!sent.contains { $0.method == "MOVE" }, "\(sent)")
        #expect(try TreeComparison.differences(work.source, server.directory + "/root/photos", compareModificationTimes: false) == [])
    }

    @Test("Apache: a push of changed files is one PUT per file to its name, no MOVE, and keeps every mtime (counted through a proxy)")
    func apachePushOfChangedFiles() async throws {
        let server = try await TestServer(.apache)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let work = Workspace()
        let remote = davURL(proxy.origin, "/dav/photos")
        try writeFiles(work.source, round: 0)
        let first = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(first.status == 0, "\(first.diagnostics)")

        try writeFiles(work.source, round: 1)
        let start = proxy.requests.count
        let second = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(second.int("uploaded") == Self.files)
        let sent = Self.fileRequests(proxy.requests.dropFirst(start))
        let puts = sent.filter { $0.method == "PUT" && $0.path.contains("/DCIM/") }
        #expect(puts.count == Self.files && puts.allSatisfy { !Self.isTemporary($0.path) }, "\(sent)")
        #expect(!sent.contains { $0.method == "MOVE" }, "\(sent)")

        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", davURL(server.origin, "/dav/photos"),
                                         "--state", work.directory.child("state2"), "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: true) == [])
    }

    @Test("nginx: a two-way sync still sends each changed file to a temporary name and MOVEs it")
    func syncKeepsTemporaryNames() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        let sync = ["sync", work.source, "--to", davURL(server.origin, "/dav/phone"), "--state", work.state, "--json"]
        try writeFiles(work.source, round: 0)
        #expect(try await work.ferry(sync).status == 0)

        try writeFiles(work.source, round: 1)
        let mark = try await server.logMark()
        let changed = try await work.ferry(sync)
        #expect(changed.status == 0, "\(changed.diagnostics)")
        #expect(changed.int("uploaded") == Self.files)
        let sent = Self.fileRequests(try await server.accessLogAfter(mark))
        let puts = sent.filter { $0.method == "PUT" && $0.path.contains("/DCIM/") }
        #expect(puts.count == Self.files && puts.allSatisfy { Self.isTemporary($0.path) }, "\(sent)")
        let moves = sent.filter { $0.method == "MOVE" && Self.isTemporary($0.path) }
        #expect(moves.count == Self.files, "\(sent)")
    }

    @Test("nginx with direct_put: off: a push of changed files keeps PUT + MOVE")
    func turnedOff() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        let config = """
            remotes:
              nas:
                type: webdav
                url: \(server.url("/dav/photos"))
                direct_put: off
            folders:
              photos:
                path: src
                remote: nas
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        try writeFiles(work.source, round: 0)
        let first = try await FerryProcess.run(["push", "photos", "--state", work.state, "--json"], in: work.directory.path)
        #expect(first.status == 0, "\(first.diagnostics)")

        try writeFiles(work.source, round: 1)
        let mark = try await server.logMark()
        let second = try await FerryProcess.run(["push", "photos", "--state", work.state, "--json"], in: work.directory.path)
        #expect(second.status == 0, "\(second.diagnostics)")
        let sent = Self.fileRequests(try await server.accessLogAfter(mark))
        let puts = sent.filter { $0.method == "PUT" && $0.path.contains("/DCIM/") }
        #expect(puts.count == Self.files && puts.allSatisfy { Self.isTemporary($0.path) }, "\(sent)")
        #expect(sent.filter { $0.method == "MOVE" }.count == Self.files, "\(sent)")
    }
}

private extension TestServer {
    /// The access-log lines after `mark` (`logMark()`), once a new mark shows that every
    /// request answered so far is in the log.
    func accessLogAfter(_ mark: Int) async throws -> [String] {
        let end = try await logMark()
        return Array(accessLog[mark..<(end - 1)])
    }
}
