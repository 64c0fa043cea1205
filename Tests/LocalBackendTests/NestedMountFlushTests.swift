import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
@testable import LocalBackend
import Testing

/// A remote folder with another filesystem mounted inside it (a USB disk in the backup
/// folder): a batch of staged uploads is flushed on every filesystem it writes to, since
/// `syncfs` flushes only the one of the folder it is given.
@Suite("LocalBackend staged uploads across a mount point")
struct NestedMountFlushTests {
    /// Mounts a small tmpfs at `path`; false where this process may not mount (not root,
    /// or a container without the capability).
    static func mountScratchFilesystem(at path: String) -> Bool {
        run(["mount", "-t", "tmpfs", "-o", "size=8m", "ferry-test", path])
    }

    @discardableResult
    static func run(_ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    @Test("a batch into a mounted folder notes both filesystems and publishes every file on each")
    func batchAcrossMountPoint() async throws {
        let (root, scratch, backend) = LocalStagedUploadTests.folders("staged-mount")
        let usb = root.child("usb")
        try FileManager.default.createDirectory(atPath: usb, withIntermediateDirectories: true)
        guard Self.mountScratchFilesystem(at: usb) else {
            try Test.cancel("mounting a tmpfs needs root (CAP_SYS_ADMIN); not checked here")
        }
        // The folder is removed only once the filesystem in it is gone.
        defer { Self.run(["umount", "-l", usb]); withExtendedLifetime(root) {} }

        var filesystems = FilesystemFlushers()
        try filesystems.note(try AnchoredFolder(root.path), at: "")
        try filesystems.note(try AnchoredFolder(root.path + "/usb"), at: "usb")
        try FileManager.default.createDirectory(atPath: usb + "/day", withIntermediateDirectories: true)
        try filesystems.note(try AnchoredFolder(usb + "/day"), at: "usb/day")
        #expect(filesystems.count == 2, "one folder per filesystem: the remote's disk and the one mounted inside it")

        let names = ["IMG_0.jpg", "usb/IMG_1.jpg", "usb/day/IMG_2.jpg", "usb/new/IMG_3.jpg"]
        var staged: [StagedUpload] = []
        for (index, name) in names.enumerated() {
            staged.append(try #require(try await backend.stageUpload(try LocalStagedUploadTests.request(scratch, name, seed: UInt64(index)),
                                                                     observer: NullTransferObserver())))
        }
        let results = try await backend.publishStaged(staged)
        for (index, name) in names.enumerated() {
            #expect(try results[index].get().entry.path.string == name)
            #expect(try TreeComparison.sameContent(scratch.child(name.replacingOccurrences(of: "/", with: "_")), root.child(name)))
        }
        let rootDevice = try #require(try LocalFileSystem.metadata(root.child("IMG_0.jpg"))).device
        let mountedDevice = try #require(try LocalFileSystem.metadata(root.child("usb/day/IMG_2.jpg"))).device
        #expect(rootDevice != mountedDevice, "the files went to two filesystems")

        // A batch on the mounted disk leaves its names to the next batch's flush, which is
        // on the remote's disk: that flush covers both filesystems.
        let onMounted = try #require(try await backend.stageUpload(
            try LocalStagedUploadTests.request(scratch, "usb/IMG_4.jpg", seed: 4), observer: NullTransferObserver()))
        let first = try await backend.publishStaged([onMounted], after: nil)
        let leftOnMounted = try #require(first.names.pending as? FilesystemFlushers)
        #expect(leftOnMounted.count == 1)
        let onRoot = try #require(try await backend.stageUpload(
            try LocalStagedUploadTests.request(scratch, "IMG_5.jpg", seed: 5), observer: NullTransferObserver()))
        var covering = FilesystemFlushers()
        try covering.note(try AnchoredFolder(root.path), at: "")
        covering.note(leftOnMounted)
        #expect(covering.count == 2, "the next batch's flush covers the filesystem of the names left")
        let second = try await backend.publishStaged([onRoot], after: first.names)
        try await backend.flushNames(second.names)
        #expect(try first.results[0].get().entry.path.string == "usb/IMG_4.jpg")
        #expect(try second.results[0].get().entry.path.string == "IMG_5.jpg")
        for name in ["usb/IMG_4.jpg", "IMG_5.jpg"] {
            #expect(try TreeComparison.sameContent(scratch.child(name.replacingOccurrences(of: "/", with: "_")), root.child(name)))
        }
    }
}
