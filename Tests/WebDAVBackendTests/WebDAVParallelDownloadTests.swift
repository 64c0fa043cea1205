import CurlTransport
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Testing

@testable import WebDAVBackend

/// A large file from nginx's WebDAV location over several ranged streams (the shared
/// machinery is tested in depth in HTTPBackendTests' ParallelDownloadTests).
@Suite("WebDAV parallel ranged download", .serialized, .integration)
struct WebDAVParallelDownloadTests {
    @Test("a 72 MiB file from nginx /dav/ comes over several ranged streams, byte for byte")
    func largeFileFromDAV() async throws {
        let server = try await TestServer(.nginx)
        let scratch = TemporaryDirectory("ferry-dav-parallel")
        let served = server.directory + "/root/big/big.bin"
        try FileManager.default.createDirectory(atPath: server.directory + "/root/big", withIntermediateDirectories: true)
        // Sparse with a random middle: holes read as zeros, so a misplaced segment shows.
        _ = FileManager.default.createFile(atPath: served, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: served))
        let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
        try handle.seek(toOffset: 30 << 20)
        try handle.write(contentsOf: try random.read(upToCount: 12 << 20) ?? Data())
        try handle.truncate(atOffset: 72 << 20)
        try handle.close()
        try random.close()

        let backend = try WebDAVBackend(baseURL: server.url("/dav/big/"), settings: CurlTransportSettings())
        let path = try RelativePath("big.bin")
        let entry = try #require(try await backend.list(.root).first { $0.path == path })
        let partial = scratch.child(".big.bin.ferry-part")
        _ = FileManager.default.createFile(atPath: partial, contents: nil)
        let mark = try await server.logMark()
        let result = try await backend.download(DownloadRequest(source: path, partialFile: partial, offset: 0, expected: entry),
                                                observer: NullTransferObserver())
        #expect(result.bytesReceived == 72 << 20 && result.entry.size == 72 << 20)
        #expect(try TreeComparison.sameContent(partial, served))
        #expect(!FileManager.default.fileExists(atPath: PartialFileLedger.path(forPartial: partial)))
        var ranged = 0
        for _ in 0..<3000 {
            ranged = server.accessLog.dropFirst(mark).filter { $0.hasPrefix("GET ") && $0.contains(" 206") }.count
            if ranged >= 16 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(ranged == 16, "72 MiB in 16 segments of 4.5 MiB")
    }
}
