import FerryTestSupport
import Foundation
import Testing

/// The state folder holds the journal (every path synced, the remotes' names) and keys:
/// no other user of the machine may read it, whoever made it first.
@Suite("the state folder is private", .integration)
struct StateFolderPrivacyTests {
    @Test("a state folder made beforehand with access for others (0755) is narrowed to 0700 by the first run")
    func narrowedToOwner() async throws {
        let work = Workspace()
        try TreeGenerator.write(at: work.source + "/a.txt", size: 10, seed: 1)
        try FileManager.default.createDirectory(atPath: work.state, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        let pushed = try await work.push()
        #expect(pushed.status == 0, "\(pushed.diagnostics)")
        let attributes = try FileManager.default.attributesOfItem(atPath: work.state)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)

        // A fresh one is made 0700 too.
        let fresh = work.directory.child("fresh-state")
        let again = try await work.ferry(["push", work.source, "--to", work.destination, "--state", fresh, "--json"])
        #expect(again.status == 0, "\(again.diagnostics)")
        let made = try FileManager.default.attributesOfItem(atPath: fresh)
        #expect((made[.posixPermissions] as? NSNumber)?.intValue == 0o700)
    }
}
