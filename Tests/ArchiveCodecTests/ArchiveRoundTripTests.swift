import ArchiveCodec
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

@Suite("archive writer and reader (libarchive)")
struct ArchiveRoundTripTests {
    struct Member {
        var name: String
        var size: Int
        var modifiedNanos: Int64
    }

    static let members = [
        Member(name: "DCIM/IMG_0001.txt", size: 300, modifiedNanos: 1_600_000_000_123_456_789),
        Member(name: "Vacances été/日本 2024.gpx", size: 0, modifiedNanos: 1_500_000_000_000_000_001),
        Member(name: "big file.bin", size: 200_000, modifiedNanos: 1_650_000_001_999_999_999),
    ]

    func writeSources(in directory: TemporaryDirectory) throws -> [String: String] {
        var sources: [String: String] = [:]
        for (index, member) in Self.members.enumerated() {
            let path = directory.child("source-\(index)")
            try TreeGenerator.write(at: path, size: member.size, seed: UInt64(index + 1))
            sources[member.name] = path
        }
        return sources
    }

    @Test("every format keeps names, sizes and bytes; tar keeps nanosecond mtimes", arguments: ArchiveFormat.allCases)
    func roundTrip(_ format: ArchiveFormat) throws {
        let directory = TemporaryDirectory()
        let sources = try writeSources(in: directory)
        let archive = directory.child("bundle." + format.fileExtension)
        var written: [String: ArchiveMemberData] = [:]
        do {
            let writer = try ArchiveWriter(path: archive, format: format)
            for member in Self.members {
                written[member.name] = try writer.append(file: sources[member.name]!, as: member.name,
                                                         size: Int64(member.size), modifiedNanos: member.modifiedNanos)
            }
            try writer.finish()
        }
        #expect(written["DCIM/IMG_0001.txt"]?.bytes == 300)

        let reader = try ArchiveReader(path: archive)
        var seen: [String] = []
        while let entry = try reader.nextEntry() {
            seen.append(entry.name)
            let member = try #require(Self.members.first { $0.name == entry.name })
            #expect(entry.kind == .file)
            #expect(entry.size.map { $0 == Int64(member.size) } ?? true)
            if format != .zip {
                #expect(entry.modifiedNanos == member.modifiedNanos)
            }
            let target = directory.child("out-\(seen.count)")
            let data = try reader.extract(to: target)
            #expect(data == written[entry.name])
            #expect(try TreeComparison.sameContent(target, sources[entry.name]!))
        }
        #expect(seen == Self.members.map(\.name))
    }

    @Test("a truncated or damaged archive is an error, never a short member", arguments: [ArchiveFormat.tarZstd, .zip])
    func truncated(_ format: ArchiveFormat) throws {
        let directory = TemporaryDirectory()
        let sources = try writeSources(in: directory)
        let archive = directory.child("bundle." + format.fileExtension)
        do {
            let writer = try ArchiveWriter(path: archive, format: format)
            for member in Self.members {
                _ = try writer.append(file: sources[member.name]!, as: member.name,
                                      size: Int64(member.size), modifiedNanos: member.modifiedNanos)
            }
            try writer.finish()
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: archive))
        try bytes.prefix(bytes.count * 2 / 3).write(to: URL(fileURLWithPath: archive))

        var failure: ArchiveError?
        var complete: [String] = []
        do {
            let reader = try ArchiveReader(path: archive)
            while let entry = try reader.nextEntry() {
                let data = try reader.extract(to: directory.child("out"))
                if data.bytes == Int64(Self.members.first { $0.name == entry.name }!.size) { complete.append(entry.name) }
            }
        } catch {
            failure = error
        }
        #expect(failure?.code == .damaged, "\(String(describing: failure))")
        #expect(!complete.contains("big file.bin"))
    }

    @Test("a file that is not an archive is refused when opened or read")
    func notAnArchive() throws {
        let directory = TemporaryDirectory()
        let path = directory.child("photo.jpg")
        try TreeGenerator.write(at: path, size: 5000, seed: 9)
        #expect(throws: ArchiveError.self) {
            let reader = try ArchiveReader(path: path)
            _ = try reader.allEntries()
        }
    }

    @Test("a source shorter than announced fails the member instead of padding it")
    func shortSource() throws {
        let directory = TemporaryDirectory()
        let path = directory.child("short")
        try TreeGenerator.write(at: path, size: 100, seed: 3)
        let writer = try ArchiveWriter(path: directory.child("b.tar.zst"), format: .tarZstd)
        #expect(throws: ArchiveError.self) {
            _ = try writer.append(file: path, as: "short", size: 200, modifiedNanos: 0)
        }
    }

    @Test("links and hostile names come back as they are stored, for the caller to refuse")
    func linksAreReported() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.child("tree"), withIntermediateDirectories: true)
        try TreeGenerator.write(at: directory.child("tree/plain.txt"), size: 10, seed: 1)
        try FileManager.default.createSymbolicLink(atPath: directory.child("tree/link"), withDestinationPath: "/etc/passwd")
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/bin/tar")
        tar.arguments = ["-cf", directory.child("links.tar"), "-C", directory.child("tree"), "plain.txt", "link"]
        try tar.run()
        tar.waitUntilExit()
        let entries = try ArchiveReader(path: directory.child("links.tar")).allEntries()
        #expect(entries.map(\.kind) == [.file, .symbolicLink])
        #expect(entries.last?.linkTarget == "/etc/passwd")

        let writer = try ArchiveWriter(path: directory.child("hostile.tar.gz"), format: .tarGzip)
        _ = try writer.append(file: directory.child("tree/plain.txt"), as: "../escape.txt", size: 10, modifiedNanos: 0)
        try writer.finish()
        #expect(try ArchiveReader(path: directory.child("hostile.tar.gz")).allEntries().map(\.name) == ["../escape.txt"])
    }
}
