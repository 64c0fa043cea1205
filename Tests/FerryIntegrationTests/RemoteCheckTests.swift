import FerryTestSupport
import Foundation
import Testing

/// A push knows its remote from the journal between full listings (`remote_check`,
/// docs/remote-check.md): a no-op push sends no request, a file deleted behind Ferry's
/// back is sent again at the next listing, and `--full`, `--delete` and `remote_check: 0`
/// list at once.
@Suite("a push trusts the journal's view of its remote between listings", .integration)
struct RemoteCheckTests {
    static func tree(at root: String) throws {
        for folder in 0..<4 {
            for index in 0..<5 {
                try TreeGenerator.write(at: "\(root)/d\(folder)/IMG_\(index).jpg", size: 100 + index, seed: UInt64(folder * 10 + index))
            }
        }
    }

    @Test("a no-op push to nginx sends no request at all; --full lists again")
    func noRequestsForNoOp() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try Self.tree(at: work.source)
        let remote = "dav://" + server.origin.dropFirst("http://".count) + "/dav/check"
        let first = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        #expect(first.status == 0 && first.int("uploaded") == 20, "\(first.diagnostics)")

        let before = try await server.logMark()
        let second = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json"])
        let after = try await server.logMark()
        #expect(second.status == 0 && second.int("skipped") == 20, "\(second.diagnostics)")
        // Only the second marker request stands between the two marks.
        let requests = server.accessLog[before..<(after - 1)]
        #expect(requests.isEmpty, "\(requests)")

        let full = try await work.ferry(["push", work.source, "--to", remote, "--state", work.state, "--json", "--full"])
        let afterFull = try await server.logMark()
        #expect(full.status == 0 && full.int("skipped") == 20, "\(full.diagnostics)")
        let listing = server.accessLog[after..<(afterFull - 1)]
        #expect(!listing.isEmpty && listing.allSatisfy { $0.hasPrefix("PROPFIND ") }, "\(listing)")
    }

    @Test("a file deleted on the remote behind Ferry's back is sent again by --full, not by a push in between")
    func deletedBehindTheBack() async throws {
        let work = Workspace()
        try Self.tree(at: work.source)
        #expect(try await work.push().status == 0)
        try FileManager.default.removeItem(atPath: work.destination + "/d1/IMG_2.jpg")

        let trusting = try await work.push()
        #expect(trusting.status == 0 && trusting.int("uploaded") == 0, "\(trusting.diagnostics)")
        let full = try await work.push(["--full"])
        #expect(full.status == 0 && full.transferredPaths == ["d1/IMG_2.jpg"], "\(full.diagnostics)")
        #expect(try TreeComparison.differences(work.source, work.destination) == [])
    }

    @Test("a mirror push lists the remote: a file put there by someone else is deleted")
    func mirrorLists() async throws {
        let work = Workspace()
        try Self.tree(at: work.source)
        #expect(try await work.push().status == 0)
        try TreeGenerator.write(at: work.destination + "/d0/stranger.jpg", size: 10, seed: 99)
        let mirror = try await work.push(["--delete"])
        #expect(mirror.status == 0 && mirror.int("deleted") == 1, "\(mirror.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: work.destination + "/d0/stranger.jpg"))
    }

    @Test("remote_check: 0 lists on every run; the check interval passing lists again")
    func intervalFromConfig() async throws {
        let work = Workspace()
        try Self.tree(at: work.source)
        for (check, resent) in [("0", true), ("1h", false)] {
            let state = work.directory.child("state-\(check)")
            let config = work.directory.child("config-\(check).yml")
            let destination = work.directory.child("dst-\(check)")
            try """
                remotes:
                  here: {type: local, path: \(destination)}
                folders:
                  photos: {path: \(work.source), remote: here, remote_check: \(check)}

                """.write(toFile: config, atomically: true, encoding: .utf8)
            let first = try await work.ferry(["push", "photos", "--config", config, "--state", state, "--json"])
            #expect(first.status == 0, "\(first.diagnostics)")
            try FileManager.default.removeItem(atPath: destination + "/d3/IMG_0.jpg")
            let second = try await work.ferry(["push", "photos", "--config", config, "--state", state, "--json"])
            #expect(second.status == 0, "\(second.diagnostics)")
            #expect(second.transferredPaths == (resent ? ["d3/IMG_0.jpg"] : []), "remote_check \(check): \(second.diagnostics)")
        }
    }
}
