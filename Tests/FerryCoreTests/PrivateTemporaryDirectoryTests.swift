import FerrySystem
import FerryTestSupport
import Foundation
import Testing

/// Scratch folders in a shared `/tmp` (`ferry ls --archive-contents` unpacks archives into
/// one): never a name another user could plant beforehand, never readable by others.
@Suite("private temporary folders")
struct PrivateTemporaryDirectoryTests {
    @Test("a private folder is new, 0700, and named at random; a planted name is never reused")
    func privateFolder() throws {
        let parent = TemporaryDirectory("ferry-private")
        // What an attacker could plant under the old predictable name.
        let planted = parent.child("ferry-ls-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: true)
        let first = try LocalFileSystem.makePrivateTemporaryDirectory(in: parent.path, prefix: "ferry-ls-")
        let second = try LocalFileSystem.makePrivateTemporaryDirectory(in: parent.path, prefix: "ferry-ls-")
        #expect(first != second && first != planted && second != planted)
        #expect(LocalFileSystem.parentPath(first) == parent.path)
        #expect(URL(fileURLWithPath: first).lastPathComponent.hasPrefix("ferry-ls-"))
        for folder in [first, second] {
            let attributes = try FileManager.default.attributesOfItem(atPath: folder)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700, "\(folder)")
            #expect(attributes[.type] as? FileAttributeType == .typeDirectory)
        }
        #expect(throws: SystemError.self) {
            _ = try LocalFileSystem.makePrivateTemporaryDirectory(in: parent.child("missing"), prefix: "x-")
        }
    }
}
