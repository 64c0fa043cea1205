import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Testing

/// `ChunkedCopy` between two open files copies inside the kernel where it can, and through
/// a buffer where it cannot; the bytes and the errors must not depend on which. A synced
/// copy leaves no more than its last windows in the page cache.
@Suite("copies between two open files")
struct KernelCopyTests {
    /// A byte pattern with no period that lines up with a chunk, so that a chunk copied to
    /// the wrong offset shows.
    func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
    }

    @Test("between two files on one filesystem the kernel copies, at the offsets asked for")
    func copiesInTheKernel() throws {
        let folder = TemporaryDirectory()
        let bytes = pattern((3 << 20) + 4_321)
        try Data(bytes).write(to: URL(fileURLWithPath: folder.child("source")))
        let source = try OpenFile(folder.child("source"), mode: .read)
        let target = try OpenFile(folder.child("target"), mode: .writeTruncate)

        // The call the copy relies on works here (Linux 4.5 and later, any one filesystem).
        let probe = try OpenFile(folder.child("probe"), mode: .writeTruncate)
        #expect(try probe.copy(from: source, at: 0, to: 0, count: 4_096) == 4_096)

        // 5 bytes of the source skipped, written from the target's 1,000th byte on.
        let count = Int64(bytes.count - 5)
        try ChunkedCopy.copy(from: source, at: 5, to: target, at: 1_000, count: count,
                             observer: NullTransferObserver(), synced: true)
        try target.sync()
        let written = try target.metadata().size
        #expect(written == 1_000 + count)
        let copied = try OpenFile(folder.child("target"), mode: .read).readAll()
        #expect(Array(copied.prefix(1_000)) == [UInt8](repeating: 0, count: 1_000))
        #expect(Array(copied.dropFirst(1_000)) == Array(bytes.dropFirst(5)))
    }

    /// Linux refuses `copy_file_range` from /proc to another filesystem (EXDEV), and older
    /// kernels copied nothing from it (0): either way the buffered copy takes over.
    @Test("a file the kernel will not copy from is copied through a buffer")
    func fallsBackToABuffer() throws {
        let folder = TemporaryDirectory()
        let expected = try OpenFile("/proc/version", mode: .read).readAll()
        #expect(!expected.isEmpty)
        let source = try OpenFile("/proc/version", mode: .read)
        let target = try OpenFile(folder.child("target"), mode: .writeTruncate)
        try ChunkedCopy.copy(from: source, at: 0, to: target, at: 0, count: Int64(expected.count),
                             observer: NullTransferObserver())
        #expect(try OpenFile(folder.child("target"), mode: .read).readAll() == expected)
    }

    /// Windows of 8 MiB (`WriteBehind.window`): of 40 MiB, the windows up to 24 MiB are on
    /// disk and dropped before the copy ends; the last two may still be cached. A buffered
    /// copy goes through the same `WriteBehind`.
    @Test("a synced copy drops the windows it has put on disk from the page cache")
    func syncedCopyLeavesTheCacheAlone() throws {
        let folder = TemporaryDirectory()
        try #require(PageCache.canDrop(in: folder.path), "the temporary folder is on tmpfs")
        let size = 40 << 20
        let mebibyte = Data(pattern(1 << 20))
        try Data((0..<40).flatMap { _ in mebibyte }).write(to: URL(fileURLWithPath: folder.child("source")))
        let source = try OpenFile(folder.child("source"), mode: .read)
        let target = try OpenFile(folder.child("target"), mode: .writeTruncate)
        try ChunkedCopy.copy(from: source, at: 0, to: target, at: 0, count: Int64(size),
                             observer: NullTransferObserver(), synced: true)
        let cached = try #require(PageCache.residentBytes(folder.child("target")))
        #expect(cached <= 2 * Int(WriteBehind.window) + ChunkedCopy.chunkSize, "\(cached) bytes cached")

        let unsynced = try OpenFile(folder.child("unsynced"), mode: .writeTruncate)
        try ChunkedCopy.copy(from: source, at: 0, to: unsynced, at: 0, count: Int64(size),
                             observer: NullTransferObserver(), synced: false)
        // The control: a copy that is not synced leaves its pages to the kernel.
        #expect(try #require(PageCache.residentBytes(folder.child("unsynced"))) > cached)
    }

    @Test("a source shorter than the count is refused, in the kernel copy's chunks as in the buffer's")
    func shorterSourceIsRefused() throws {
        let folder = TemporaryDirectory()
        try Data(pattern((2 << 20) + 10)).write(to: URL(fileURLWithPath: folder.child("source")))
        let source = try OpenFile(folder.child("source"), mode: .read)
        let target = try OpenFile(folder.child("target"), mode: .writeTruncate)
        let error = #expect(throws: BackendError.self) {
            try ChunkedCopy.copy(from: source, at: 0, to: target, at: 0, count: 3 << 20,
                                 observer: NullTransferObserver(), synced: true)
        }
        #expect(error?.code == .changedDuringTransfer)
    }
}
