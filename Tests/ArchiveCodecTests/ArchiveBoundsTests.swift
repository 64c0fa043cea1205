import ArchiveCodec
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Testing

/// What a hostile archive cannot make the reader do: write past a member's allowed size,
/// or read a format or filter Ferry does not write bundles in.
@Suite("archive reader bounds")
struct ArchiveBoundsTests {
    /// A bundle whose one member is `size` zero bytes (from a sparse file, so the test
    /// writes nothing large itself).
    static func zeroBundle(in directory: TemporaryDirectory, size: Int64, format: ArchiveFormat = .tarZstd) throws -> String {
        let source = directory.child("zeros")
        #expect(FileManager.default.createFile(atPath: source, contents: nil))
        #expect(truncate(source, off_t(size)) == 0)
        let archive = directory.child("bundle." + format.fileExtension)
        let writer = try ArchiveWriter(path: archive, format: format)
        _ = try writer.append(file: source, as: "zeros.bin", size: size, modifiedNanos: 1_600_000_000_000_000_000)
        try writer.finish()
        return archive
    }

    @Test("extraction stops at the first byte past the limit", arguments: ArchiveFormat.allCases)
    func extractionStopsAtLimit(_ format: ArchiveFormat) throws {
        let directory = TemporaryDirectory()
        let archive = try Self.zeroBundle(in: directory, size: 8 << 20, format: format)
        let reader = try ArchiveReader(path: archive)
        _ = try #require(try reader.nextEntry())
        let target = directory.child("out")
        #expect(throws: ArchiveError.self) { try reader.extract(to: target, limit: 5) }
        let written = try #require(try LocalFileSystem.metadata(target))
        #expect(written.size <= 5)

        // Exactly the limit is fine.
        let again = try ArchiveReader(path: archive)
        _ = try again.nextEntry()
        #expect(try again.extract(to: directory.child("exact"), limit: 8 << 20).bytes == 8 << 20)
    }

    /// Bundle restores open each partial file through a folder handle that never follows a
    /// link; the bytes must go into that very file, not into whatever its path names by the
    /// time they are written (a folder swapped for a link to elsewhere meanwhile).
    @Test("extraction into an opened file writes that file, whatever its path names by then")
    func extractionIntoOpenedFile() throws {
        let directory = TemporaryDirectory()
        let archive = try Self.zeroBundle(in: directory, size: 4096)
        let reader = try ArchiveReader(path: archive)
        _ = try #require(try reader.nextEntry())
        let folder = directory.child("photos")
        let outside = directory.child("outside")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let opened = try OpenFile(folder + "/.a.jpg.ferry-part", mode: .writeTruncate, permissions: 0o600)
        // The folder is swapped for a link to another place, holding a file of the same name.
        try FileManager.default.moveItem(atPath: folder, toPath: directory.child("moved"))
        try FileManager.default.createSymbolicLink(atPath: folder, withDestinationPath: outside)
        #expect(FileManager.default.createFile(atPath: outside + "/.a.jpg.ferry-part", contents: nil))

        let data = try reader.extract(into: opened, named: folder + "/.a.jpg.ferry-part", flush: false)
        #expect(data.bytes == 4096)
        #expect(try LocalFileSystem.metadata(outside + "/.a.jpg.ferry-part")?.size == 0, "nothing written through the link")
        #expect(try LocalFileSystem.metadata(directory.child("moved") + "/.a.jpg.ferry-part")?.size == 4096)
    }

    @Test("a bundle is read only as tar or zip, plain or gzip or zstd: other formats and filters are refused")
    func bundlesOnlyInFerrysFormats() throws {
        let directory = TemporaryDirectory()
        // A cpio archive (libarchive reads it with format_all) and an lzop-compressed file
        // (format_all + filter_all would run the external `lzop -d` on it).
        let cpio = directory.child("a.cpio")
        try Data(Self.cpio(["a.txt": "hello"])).write(to: URL(fileURLWithPath: cpio))
        let lzop = directory.child("a.tar.lzo")
        try Data([0x89, 0x4C, 0x5A, 0x4F, 0x00, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 64))
            .write(to: URL(fileURLWithPath: lzop))
        for path in [cpio, lzop] {
            #expect(throws: ArchiveError.self) {
                let reader = try ArchiveReader(path: path)
                _ = try reader.nextEntry()
            }
        }
        // Ferry's own formats still read.
        for format in ArchiveFormat.allCases {
            let archive = try Self.zeroBundle(in: directory, size: 10, format: format)
            #expect(try ArchiveReader(path: archive).allEntries().map(\.name) == ["zeros.bin"])
        }
    }

    /// A `newc` cpio archive of text files, which libarchive's `format_all` reads.
    static func cpio(_ files: [String: String]) -> [UInt8] {
        func entry(_ name: String, _ data: [UInt8], mode: Int) -> [UInt8] {
            let nameBytes = Array(name.utf8) + [0]
            let fields = [1, mode, 0, 0, 1, 0, data.count, 0, 0, 0, 0, nameBytes.count, 0]
            var out = Array("070701".utf8) + fields.flatMap { Array(String(format: "%08X", $0).utf8) } + nameBytes
            out += [UInt8](repeating: 0, count: (4 - out.count % 4) % 4)
            out += data
            out += [UInt8](repeating: 0, count: (4 - out.count % 4) % 4)
            return out
        }
        return files.sorted { $0.key < $1.key }.flatMap { entry($0.key, Array($0.value.utf8), mode: 0o100644) }
            + entry("TRAILER!!!", [], mode: 0)
    }
}
