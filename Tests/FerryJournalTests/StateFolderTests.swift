import FerryJournal
import FerrySystem
import FerryTestSupport
import Foundation
import Testing

@Suite("the state folder as the only opener of its journal and history")
struct StateFolderTests {
    @Test("asking for nothing creates nothing; one handle is shared by every caller")
    func oneHandleCreatedOnDemand() async throws {
        let folder = TemporaryDirectory()
        let state = StateFolder(directory: folder.child("state"))
        #expect(try await state.existingJournal() == nil)
        #expect(try await state.existingHistory() == nil)
        #expect((try? LocalFileSystem.metadata(folder.child("state"))) == nil, "a reader made the state folder")

        async let first = state.journal()
        async let second = state.journal()
        let (a, b) = try await (first, second)
        let c = try #require(try await state.existingJournal())
        #expect(a === b && b === c)
        let history = try await state.history()
        #expect(try await state.existingHistory() === history)
    }

    /// The journal's damage message tells the user to move it aside and run again. A
    /// daemon holding the folder must then start a new journal, not go on writing into
    /// the one moved away.
    @Test("a journal moved aside is not written to again; the next caller gets a new one")
    func movedAsideIsLetGo() async throws {
        let folder = TemporaryDirectory()
        let state = StateFolder(directory: folder.path)
        let old = try await state.journal()
        _ = try await old.folderPair(name: "photos", localRoot: "/photos", remoteLocation: "r:/", at: 1)
        let aside = StateFolder(directory: folder.child("aside"))
        try FileManager.default.createDirectory(atPath: aside.directory, withIntermediateDirectories: false)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: state.journalPath + suffix) {
            try FileManager.default.moveItem(atPath: state.journalPath + suffix, toPath: aside.journalPath + suffix)
        }
        #expect(try await state.existingJournal() == nil)

        let fresh = try await state.journal()
        #expect(fresh !== old)
        #expect(try await fresh.folderPairs().isEmpty)
        _ = try await fresh.folderPair(name: "videos", localRoot: "/videos", remoteLocation: "r:/v", at: 2)
        #expect(try await aside.journal().folderPairs().map(\.name) == ["photos"])
        #expect(try await StateFolder(directory: folder.path).journal().folderPairs().map(\.name) == ["videos"])
    }
}
