import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import LocalBackend
import Testing

/// Several downloads on the calling thread (`downloadNow`), as the core fetches a batch of
/// small files: each has its own result, and one that fails leaves the others whole.
@Suite("LocalBackend direct downloads")
struct LocalDirectDownloadTests {
    @Test("a batch fetches files from several folders; a missing one, a link and a grown one fail alone")
    func batchOfDownloads() throws {
        let root = TemporaryDirectory("ferry-direct-root")
        let local = TemporaryDirectory("ferry-direct-local")
        let backend = LocalBackend(root: root.path)
        let names = ["a/IMG_1.jpg", "a/IMG_2.jpg", "b/IMG_3.jpg", "IMG_4.jpg", "a/gone.jpg", "a/link.jpg", "b/grown.jpg"]
        for (index, name) in names.enumerated() where !name.hasSuffix("link.jpg") {
            try TreeGenerator.write(at: root.child(name), size: 4096, seed: UInt64(index), modified: 1_700_000_000.5)
        }
        try FileManager.default.createSymbolicLink(atPath: root.child("a/link.jpg"), withDestinationPath: root.child("a/IMG_1.jpg"))
        var downloads: [(request: DownloadRequest, observer: any TransferObserver)] = []
        for name in names {
            let partial = local.child(name.replacingOccurrences(of: "/", with: "_") + ".part")
            #expect(FileManager.default.createFile(atPath: partial, contents: nil))
            let expected = RemoteEntry(path: try RelativePath(name), kind: .file, size: 4096, modifiedNanos: 1_700_000_000_500_000_000)
            downloads.append((DownloadRequest(source: expected.path, partialFile: partial, offset: 0, expected: expected, flush: false),
                              NullTransferObserver()))
        }
        // Listed before it was deleted, and before it grew.
        try FileManager.default.removeItem(atPath: root.child("a/gone.jpg"))
        try TreeGenerator.write(at: root.child("b/grown.jpg"), size: 8192, seed: 6)

        let results = backend.downloadNow(downloads)
        #expect(results.count == names.count)
        for (index, name) in names.enumerated() {
            switch name {
            case "a/gone.jpg":
                #expect(throws: BackendError.self) { try results[index].get() }
                if case let .failure(error) = results[index] { #expect(error.code == .notFound) }
            case "a/link.jpg":
                #expect(throws: BackendError.self) { try results[index].get() }
            case "b/grown.jpg":
                if case let .failure(error) = results[index] { #expect(error.code == .changedDuringTransfer) } else {
                    Issue.record("a file larger than listed was fetched")
                }
            default:
                let result = try results[index].get()
                #expect(result.bytesReceived == 4096 && result.resumedFrom == 0)
                #expect(result.entry.modifiedNanos == 1_700_000_000_500_000_000)
                #expect(try TreeComparison.sameContent(root.child(name), downloads[index].request.partialFile))
            }
        }
    }
}
