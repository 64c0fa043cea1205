import FerryTestSupport
import Foundation
import Testing

/// The requests a push of new small files sends per file, counted through a proxy, and
/// the no-op push after it.
@Suite("WebDAV requests per new file through the ferry command", .integration)
struct WebDAVRequestsPerFileTests {
    static let files = 12

    func davURL(_ origin: String, _ path: String) -> String {
        "dav://" + origin.dropFirst("http://".count) + path
    }

    /// `(METHOD, PATH)` of a proxy's log lines, without the capability probe's.
    static func fileRequests(_ lines: some Sequence<String>) -> [(method: String, path: String)] {
        lines.compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 2, !fields[1].contains(".ferry-probe") else { return nil }
            return (String(fields[0]), String(fields[1]))
        }
    }

    @Test("Apache: a new file is one PUT and one PROPPATCH, its version learnt from a listing of the batch's folder; the next push sends nothing")
    func apacheNewFiles() async throws {
        let server = try await TestServer(.apache)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let work = Workspace()
        for index in 0..<Self.files {
            try TreeGenerator.write(at: work.source + "/DCIM/IMG_\(index).jpg", size: 4096, seed: UInt64(index),
                                    modified: 1_700_000_000.5 + Double(index))
        }
        let remote = davURL(proxy.origin, "/dav/photos")
        var start = proxy.requests.count
        let first = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(first.status == 0, "\(first.diagnostics)")
        #expect(first.int("uploaded") == Self.files)
        var sent = Self.fileRequests(proxy.requests.dropFirst(start))
        let inFolder = sent.filter { $0.path.hasPrefix("/dav/photos/DCIM/") }
        #expect(inFolder.filter { $0.method == "PUT" }.count == Self.files, "\(sent)")
        #expect(inFolder.filter { $0.method == "PROPPATCH" }.count == Self.files, "\(sent)")
        #expect(!sent.contains { $0.method == "MOVE" }, "\(sent)")
        // Before: a PROPFIND of each file after its PUT. Now a batch of files in one
        // folder shares one listing of it; how many batches a run makes depends on how
        // fast the files go, but a dozen files are never a dozen batches of one.
        let lookups = inFolder.filter { $0.method == "PROPFIND" }
        #expect(lookups.count < Self.files, "\(sent)")
        #expect(lookups.contains { $0.path == "/dav/photos/DCIM/" }, "\(sent)")

        start = proxy.requests.count
        let again = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(again.int("uploaded") == 0)
        sent = Self.fileRequests(proxy.requests.dropFirst(start))
        #expect(!sent.contains { ["PUT", "PROPPATCH", "MOVE", "DELETE"].contains($0.method) }, "a no-op: \(sent)")

        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", davURL(server.origin, "/dav/photos"),
                                         "--state", work.directory.child("state2"), "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: true) == [],
                "every file's time kept on the server")
    }

    /// A plain push needs no condition on a new name (`TransferExecutor.guardsNewNames`),
    /// so nginx, which honours none on a PUT, gets one PUT to the name per file.
    @Test("nginx: a new file is one PUT to its name, no MOVE; the next push sends nothing")
    func nginxNewFiles() async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let work = Workspace()
        for index in 0..<Self.files {
            try TreeGenerator.write(at: work.source + "/DCIM/IMG_\(index).jpg", size: 4096, seed: UInt64(index),
                                    modified: 1_700_000_000 + Double(index))
        }
        let remote = davURL(proxy.origin, "/dav/photos")
        var start = proxy.requests.count
        let first = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(first.status == 0, "\(first.diagnostics)")
        var sent = Self.fileRequests(proxy.requests.dropFirst(start))
        let inFolder = sent.filter { $0.path.hasPrefix("/dav/photos/DCIM/") }
        let puts = inFolder.filter { $0.method == "PUT" }
        #expect(puts.count == Self.files && puts.allSatisfy { !$0.path.contains(".ferry-part") }, "\(sent)")
        #expect(!inFolder.contains { $0.method == "MOVE" || $0.method == "PROPPATCH" }, "\(sent)")
        // The first uploads to a server are checked (`UploadConfirmation`), the rest predicted.
        #expect(inFolder.filter { $0.method == "PROPFIND" }.count <= 3 + 4, "\(sent)")

        start = proxy.requests.count
        let again = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(again.int("uploaded") == 0)
        sent = Self.fileRequests(proxy.requests.dropFirst(start))
        #expect(!sent.contains { ["PUT", "PROPPATCH", "MOVE", "DELETE"].contains($0.method) }, "a no-op: \(sent)")
    }
}
