import FerryTestSupport
import Foundation
import Testing

/// `push --delete` to S3 sends its deletes as DeleteObjects batches (issue 15), counted by a
/// proxy in front of the store; each file still ends on its own in the journal.
@Suite("S3 deletes in batches", .integration)
struct S3DeleteBatchTests {
    /// `count` small photos in `DCIM/`, all in the media queue.
    static func photos(in root: String, count: Int) throws -> [String] {
        try (0..<count).map { index in
            let name = String(format: "DCIM/IMG_%04d.jpg", index)
            try TreeGenerator.write(at: root + "/" + name, size: 64, seed: UInt64(index + 1), modified: 1_700_000_000)
            return name
        }
    }

    /// The journal's file rows (path and last error), read with the sqlite3 tool.
    static func journalRows(_ state: String) async throws -> [String: String] {
        let output = try await onOwnThread { () throws -> String in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            process.arguments = [state + "/journal.sqlite", "SELECT path || char(9) || coalesce(lastError, '') FROM file"]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        var rows: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            rows[String(fields[0])] = fields.count > 1 ? String(fields[1]) : ""
        }
        return rows
    }

    /// Pushes `count` photos through a counting proxy, removes them locally, and pushes
    /// again with `--delete`; returns the workspace, the proxy, the second run and the
    /// requests that run sent.
    static func pushThenMirror(_ kind: S3TestServer.Kind, count: Int, proxyOptions: [String],
                               keep: [String] = []) async throws -> (Workspace, FaultProxy, FerryProcess.Result, [String], S3TestServer) {
        let server = try await S3TestServer(kind)
        let proxy = try await FaultProxy(upstream: server.endpoint, share: 0, options: ["--keep-host"] + proxyOptions)
        var environment = server.environment
        environment["AWS_ENDPOINT_URL_S3"] = proxy.origin
        let work = Workspace()
        let names = try photos(in: work.source, count: count)
        let remote = "s3://\(S3TestServer.bucket)/phone"
        let first = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"], environment: environment)
        #expect(first.status == 0 && first.int("uploaded") == count, "\(first.diagnostics)")
        for name in names where !keep.contains(name) {
            try FileManager.default.removeItem(atPath: work.source + "/" + name)
        }
        let before = proxy.requests.count
        let mirror = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json", "--delete",
                                           "--max-delete", String(count)], environment: environment)
        return (work, proxy, mirror, Array(proxy.requests.dropFirst(before)), server)
    }

    static func isDeleteObjects(_ line: String) -> Bool { line.hasPrefix("POST ") && line.contains("?delete") }

    /// One full DeleteObjects request (S3 takes at most 1,000 keys in one) and part of a
    /// second. It was 2,500 files: twice the uploads through the proxy for no case more.
    static let mirrorCount = 1_200

    @Test("push --delete of 1,200 files: at most 2 DeleteObjects requests, no single DELETE, no row and no object left",
          arguments: S3TestServer.Kind.singleProcess)
    func mirrorInBatches(_ kind: S3TestServer.Kind) async throws {
        let (work, _, mirror, requests, server) = try await Self.pushThenMirror(kind, count: Self.mirrorCount, proxyOptions: [])
        #expect(mirror.status == 0, "\(mirror.diagnostics)")
        #expect(mirror.int("deleted") == Self.mirrorCount, "\(mirror.diagnostics)")
        #expect(mirror.events(named: "deleted").count == Self.mirrorCount, "each file is still reported")
        let batches = requests.filter(Self.isDeleteObjects)
        #expect((1...2).contains(batches.count), "\(batches)")
        #expect(requests.filter { $0.hasPrefix("DELETE ") }.isEmpty, "\(requests.prefix(5))")
        #expect(try await Self.journalRows(work.state).isEmpty)

        // Nothing is left on the remote: a pull into a fresh state finds no file.
        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", "s3://\(S3TestServer.bucket)/phone",
                                         "--state", work.directory.child("fresh-state"), "--json"], environment: server.environment)
        #expect(pull.status == 0 && pull.int("downloaded") == 0, "\(pull.diagnostics)")
    }

    @Test("a key the store refuses keeps its row with the error; the other files' rows and objects are gone")
    func refusedKeyKeepsItsRow() async throws {
        let (work, _, mirror, requests, server) = try await Self.pushThenMirror(.moto, count: 40, proxyOptions: ["--deny-delete", "IMG_0007"])
        #expect(mirror.status != 0, "one file failed: \(mirror.diagnostics)")
        #expect(mirror.int("deleted") == 39, "\(mirror.diagnostics)")
        let failed = mirror.events(named: "failed")
        #expect(failed.count == 1 && (failed.first?["path"] as? String) == "DCIM/IMG_0007.jpg", "\(failed)")
        #expect(requests.contains { Self.isDeleteObjects($0) && $0.hasSuffix("denied 1 200") }, "\(requests)")
        let rows = try await Self.journalRows(work.state)
        #expect(rows.keys.sorted() == ["DCIM/IMG_0007.jpg"], "\(rows)")
        #expect(rows["DCIM/IMG_0007.jpg"]?.contains("denied access") == true, "\(rows)")

        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", "s3://\(S3TestServer.bucket)/phone",
                                         "--state", work.directory.child("fresh-state"), "--json"], environment: server.environment)
        #expect(pull.int("downloaded") == 1, "\(pull.diagnostics)")
        #expect(FileManager.default.fileExists(atPath: restored + "/DCIM/IMG_0007.jpg"))
    }

    @Test("a store answering 501 to DeleteObjects: one refused request, then a DELETE per file, and every row gone")
    func notImplementedFallsBack() async throws {
        let (work, _, mirror, requests, _) = try await Self.pushThenMirror(.moto, count: 40, proxyOptions: ["--script", "POST=501"])
        #expect(mirror.status == 0 && mirror.int("deleted") == 40, "\(mirror.diagnostics)")
        #expect(requests.filter(Self.isDeleteObjects).count == 1, "\(requests)")
        #expect(requests.filter { $0.hasPrefix("DELETE ") }.count == 40, "\(requests)")
        #expect(try await Self.journalRows(work.state).isEmpty)
    }
}
