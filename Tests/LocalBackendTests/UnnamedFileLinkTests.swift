import FerryPluginAPI
@testable import FerrySystem
import FerryTestSupport
import Foundation
import Testing

/// A file written with no name (`O_TMPFILE`) is named by its descriptor where the kernel
/// allows it (root, or Linux 6.10 and later) and through `/proc/self/fd` otherwise; both
/// ways must name the very bytes written and refuse a name that is taken. The suite runs
/// where the first way is allowed, so the way through `/proc` is asked for here by name.
@Suite("Naming a file written with no name")
struct UnnamedFileLinkTests {
    @Test("either way names the bytes written, and a taken name fails with EEXIST, leaving it as it was", arguments: [false, true])
    func namesOrRefuses(throughProc: Bool) throws {
        let root = TemporaryDirectory("ferry-unnamed-link")
        try FileManager.default.createDirectory(atPath: root.child("sub"), withIntermediateDirectories: true)
        let folder = try AnchoredFolder(root.path)
        let bytes = [UInt8]((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

        let file = try folder.createUnnamed(for: "sub/a.jpg")
        try file.write(bytes, count: bytes.count, at: 0)
        try folder.link(file, as: "sub/a.jpg", throughProc: throughProc)
        #expect(try OpenFile(root.child("sub/a.jpg"), mode: .read).readAll() == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.child("sub")) == ["a.jpg"])

        let other = try folder.createUnnamed(for: "sub/a.jpg")
        try other.write([1, 2, 3], count: 3, at: 0)
        do {
            try folder.link(other, as: "sub/a.jpg", throughProc: throughProc)
            Issue.record("a taken name was linked over")
        } catch {
            #expect(error.code == EEXIST, "\(error)")
        }
        #expect(try OpenFile(root.child("sub/a.jpg"), mode: .read).readAll() == bytes)
    }
}
