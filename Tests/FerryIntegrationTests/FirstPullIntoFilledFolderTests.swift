import FerryTestSupport
import Foundation
import Testing

/// A first pull into a folder that already holds files (a reinstalled laptop, a copy made
/// by hand): no sync ever vouched for the local files, so one that differs from the remote
/// copy is a version of its own, not an old copy to overwrite.
@Suite("first pull into a folder that already holds files", .integration)
struct FirstPullIntoFilledFolderTests {
    @Test("a differing local file is kept aside under a conflict name, an identical one is adopted without transfer")
    func differingFileIsKeptAside() async throws {
        let work = Workspace()
        let t0 = Date(timeIntervalSince1970: 1_700_000_000)
        for name in ["a", "b", "c"] {
            try SyncMatrix.write("remote-\(name)", at: work.source + "/m/\(name).jpg", modified: t0)
        }
        let push = try await work.push()
        #expect(push.status == 0, "\(push.diagnostics)")

        let laptop = work.directory.child("laptop")
        // Newer and different: the case that was overwritten silently.
        try SyncMatrix.write("edited on the laptop", at: laptop + "/m/a.jpg", modified: t0.addingTimeInterval(3600))
        // The same bytes and time as the remote copy.
        try SyncMatrix.write("remote-b", at: laptop + "/m/b.jpg", modified: t0)
        let laptopState = work.directory.child("laptop-state")
        let pull = try await work.ferry(["pull", laptop, "--from", work.destination, "--state", laptopState, "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("kept_both") == 1, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == 2, "a.jpg's remote version and c.jpg: \(pull.diagnostics)")

        let tree = SyncMatrix.normalised(try SyncMatrix.contents(of: laptop))
        #expect(tree == ["m/a.jpg": "remote-a", "m/a.conflict.jpg": "edited on the laptop",
                         "m/b.jpg": "remote-b", "m/c.jpg": "remote-c"])
        // The kept copy stays on the laptop: a pull sends nothing.
        #expect(try SyncMatrix.contents(of: work.destination).keys.sorted() == ["m/a.jpg", "m/b.jpg", "m/c.jpg"])

        let again = try await work.ferry(["pull", laptop, "--from", work.destination, "--state", laptopState, "--json"])
        #expect(again.status == 0 && again.int("downloaded") == 0 && again.int("kept_both") == 0, "\(again.diagnostics)")
    }
}
