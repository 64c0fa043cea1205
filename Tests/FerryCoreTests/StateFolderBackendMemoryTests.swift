import FerryTestSupport
import Foundation
import Testing
@testable import FerryCore

/// What a backend keeps about its server in the state folder: read back whole or not at
/// all, owner-only, and never a reason for a run to fail.
@Suite("a backend's memory in the state folder")
struct StateFolderBackendMemoryTests {
    @Test("kept per key, replaced whole, owner-only, with no scratch file left; another key or state folder reads nothing")
    func roundTrip() throws {
        let folder = TemporaryDirectory("ferry-backend-memory")
        let memory = StateFolderBackendMemory(stateDirectory: folder.child("state"))
        #expect(memory.recall("webdav https://nas/dav/") == nil)
        memory.remember("webdav https://nas/dav/", Data("first".utf8))
        memory.remember("webdav https://nas/dav/", Data("second, longer than the first".utf8))
        memory.remember("webdav https://nas/other/", Data("other".utf8))
        #expect(memory.recall("webdav https://nas/dav/") == Data("second, longer than the first".utf8))
        #expect(memory.recall("webdav https://nas/other/") == Data("other".utf8))
        #expect(StateFolderBackendMemory(stateDirectory: folder.child("elsewhere")).recall("webdav https://nas/dav/") == nil)

        let servers = folder.child("state/servers")
        let names = try FileManager.default.contentsOfDirectory(atPath: servers).sorted()
        #expect(names.count == 2 && names.allSatisfy { $0.count == 64 && $0.allSatisfy(\.isHexDigit) }, "\(names)")
        let file = try FileManager.default.attributesOfItem(atPath: servers + "/" + names[0])
        #expect((file[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let folderMode = try FileManager.default.attributesOfItem(atPath: servers)[.posixPermissions] as? NSNumber
        #expect(folderMode?.intValue == 0o700)
    }

    @Test("a file too large to be a backend's, or one that is a folder, reads as nothing")
    func oddFilesReadAsNothing() throws {
        let folder = TemporaryDirectory("ferry-backend-memory-odd")
        let memory = StateFolderBackendMemory(stateDirectory: folder.path)
        let servers = folder.child("servers")
        try FileManager.default.createDirectory(atPath: servers, withIntermediateDirectories: true)
        try Data(count: StateFolderBackendMemory.maxBytes + 1)
            .write(to: URL(fileURLWithPath: servers + "/" + StateFolderBackendMemory.fileName("large")))
        try FileManager.default.createDirectory(atPath: servers + "/" + StateFolderBackendMemory.fileName("folder"),
                                                withIntermediateDirectories: true)
        #expect(memory.recall("large") == nil)
        #expect(memory.recall("folder") == nil)
    }

    @Test("a state folder that cannot be written: nothing is kept and nothing is thrown")
    func unwritableStateFolder() throws {
        let folder = TemporaryDirectory("ferry-backend-memory-ro")
        // A file where the servers folder should be: no directory can be made there.
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: folder.child("servers")))
        let memory = StateFolderBackendMemory(stateDirectory: folder.path)
        memory.remember("key", Data("value".utf8))
        #expect(memory.recall("key") == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["servers"])
    }
}
