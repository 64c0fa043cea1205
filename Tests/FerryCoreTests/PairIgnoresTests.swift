import FerryConfig
@testable import FerryCore
@testable import FerryEngine
@testable import FerryPlanning
import FerryTestSupport
import Foundation
import Testing

/// What every part that looks at a folder (a run, the watcher, the daemon's feed of new
/// files, verify) leaves alone: the state folder inside the synced folder, and a sync
/// folder's trash kept there under another name.
@Suite struct PairIgnoresTests {
    private func pair(_ root: String, mode: SyncMode = .push, trash: TrashSettings = .standard) -> FolderPair {
        FolderPair(name: "test", localRoot: root, backend: InMemoryBackend(), remoteRoot: .root, mode: mode, ignore: [],
                   trash: trash)
    }

    @Test("a state folder inside the synced folder is left alone, with everything below it")
    func stateFolderInside() throws {
        let folder = TemporaryDirectory("pair-ignores")
        try FileManager.default.createDirectory(atPath: folder.child("photos/.state [1]"), withIntermediateDirectories: true)
        let set = try PairIgnores.globSet(pair: pair(folder.child("photos")), config: Config.defaults,
                                          stateDirectory: folder.child("photos/.state [1]"))
        #expect(set.matches(".state [1]"))
        #expect(set.matches(".state [1]/journal.sqlite"))
        #expect(set.matches(".state [1]/catalogs/pair-1.digest"))
        #expect(!set.matches("DCIM/.state [1]/x.jpg"), "only the folder at the top is the state folder")
        #expect(!set.matches("DCIM/IMG_1.jpg"))
    }

    @Test("a state folder elsewhere adds nothing")
    func stateFolderOutside() throws {
        let folder = TemporaryDirectory("pair-ignores")
        try FileManager.default.createDirectory(atPath: folder.child("photos"), withIntermediateDirectories: true)
        let patterns = PairIgnores.patterns(pair: pair(folder.child("photos")), config: Config.defaults, stateDirectory: folder.child("state"))
        #expect(patterns == ScanSettings.builtInIgnores)
    }

    @Test("a sync folder's trash under another name inside the folder is left alone; a push has none")
    func trashInside() throws {
        let folder = TemporaryDirectory("pair-ignores")
        var trash = TrashSettings.standard
        trash.localPath = "Old versions"
        let sync = try PairIgnores.globSet(pair: pair(folder.child("photos"), mode: .sync, trash: trash), config: Config.defaults,
                                           stateDirectory: folder.child("state"))
        #expect(sync.matches("Old versions/2026-11-25/a.jpg"))
        #expect(!sync.matches("DCIM/Old versions/a.jpg"))
        let push = PairIgnores.patterns(pair: pair(folder.child("photos"), trash: trash), config: Config.defaults,
                                        stateDirectory: folder.child("state"))
        #expect(push == ScanSettings.builtInIgnores)
    }
}
