import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import LocalBackend
import Testing

@Suite("LocalBackend copy")
struct LocalBackendCopyTests {
    @Test("a copy keeps the source's bytes and modification time, to the nanosecond, and leaves no temporary file")
    func keepsModificationTime() async throws {
        let root = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.path + "/a", withIntermediateDirectories: true)
        try TreeGenerator.write(at: root.path + "/a/IMG_1.jpg", size: 300_000, seed: 3, modified: 1_650_000_000.123_456)
        let source = try #require(try LocalFileSystem.metadata(root.path + "/a/IMG_1.jpg"))
        #expect(source.modifiedNanos % 1_000_000_000 != 0)

        try await LocalBackend(root: root.path).copy(from: RelativePath("a/IMG_1.jpg"), to: RelativePath("b/c/IMG_1.jpg"), overwrite: false)
        let copy = try #require(try LocalFileSystem.metadata(root.path + "/b/c/IMG_1.jpg"))
        #expect(copy.modifiedNanos == source.modifiedNanos)
        #expect(copy.inode != source.inode)
        #expect(try TreeComparison.sameContent(root.path + "/a/IMG_1.jpg", root.path + "/b/c/IMG_1.jpg"))
        #expect(try LocalFileSystem.directoryEntries(root.path + "/b/c") == ["IMG_1.jpg"])
    }

    @Test("a copy does not touch a partial upload of the same target, which a later upload may continue")
    func leavesUploadSessionAlone() async throws {
        let root = TemporaryDirectory()
        try TreeGenerator.write(at: root.path + "/IMG_1.jpg", size: 1000, seed: 4)
        let uploadPartial = root.path + "/" + TemporaryName.for("IMG_2.jpg")
        try Data(repeating: 0xAB, count: 500).write(to: URL(fileURLWithPath: uploadPartial))
        try await LocalBackend(root: root.path).copy(from: RelativePath("IMG_1.jpg"), to: RelativePath("IMG_2.jpg"), overwrite: false)
        #expect(try Data(contentsOf: URL(fileURLWithPath: uploadPartial)) == Data(repeating: 0xAB, count: 500))
        #expect(try TreeComparison.sameContent(root.path + "/IMG_1.jpg", root.path + "/IMG_2.jpg"))
    }

    @Test("copying a folder or onto a folder is refused")
    func folders() async throws {
        let root = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.path + "/dir", withIntermediateDirectories: true)
        try TreeGenerator.write(at: root.path + "/IMG_1.jpg", size: 10, seed: 5)
        let backend = LocalBackend(root: root.path)
        await #expect { try await backend.copy(from: RelativePath("dir"), to: RelativePath("dir2"), overwrite: true) } throws: {
            ($0 as? BackendError)?.code == .unsupported
        }
        await #expect { try await backend.copy(from: RelativePath("IMG_1.jpg"), to: RelativePath("dir"), overwrite: true) } throws: {
            ($0 as? BackendError)?.code == .alreadyExists
        }
    }
}
