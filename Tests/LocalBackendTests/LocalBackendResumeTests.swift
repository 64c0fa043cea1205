import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import LocalBackend
import Synchronization
import Testing

/// Checks the final name on every chunk: it must not exist until the upload completes.
final class FinalNameWatcher: TransferObserver {
    let finalPath: String
    let sawFinalName = Mutex(false)
    let chunks = Mutex(0)

    init(finalPath: String) {
        self.finalPath = finalPath
    }

    func bytesTransferred(_ count: Int) -> Duration {
        chunks.withLock { $0 += 1 }
        if FileManager.default.fileExists(atPath: finalPath) { sawFinalName.withLock { $0 = true } }
        return .zero
    }

    var isCancelled: Bool { false }
}

/// Rewrites the source in place (same size, new bytes, new mtime) once the copy is under
/// way, as a camera app saving over a file would.
final class RewriteInPlace: TransferObserver {
    let source: String
    let done = Mutex(false)

    init(source: String) {
        self.source = source
    }

    func bytesTransferred(_ count: Int) -> Duration {
        let first = done.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        if first, let handle = FileHandle(forWritingAtPath: source) {
            let size = (try? handle.seekToEnd()) ?? 0
            try? handle.seek(toOffset: 0)
            handle.write(Data(repeating: 0x5A, count: Int(size)))
            try? handle.close()
        }
        return .zero
    }

    var isCancelled: Bool { false }
}

/// Cancels the transfer after a number of bytes, as a crash would stop it.
final class StopAfter: TransferObserver {
    let limit: Int
    let moved = Mutex(0)

    init(bytes: Int) {
        limit = bytes
    }

    func bytesTransferred(_ count: Int) -> Duration {
        moved.withLock { $0 += count }
        return .zero
    }

    var isCancelled: Bool { moved.withLock { $0 } >= limit }
}

@Suite("LocalBackend resume and atomicity")
struct LocalBackendResumeTests {
    func makeSource(_ folder: TemporaryDirectory, size: Int) throws -> (UploadRequest, String) {
        let source = folder.child("source.mov")
        try TreeGenerator.write(at: source, size: size, seed: 99, modified: 1_650_000_000.5)
        let meta = try #require(try LocalFileSystem.metadata(source))
        return (UploadRequest(source: source, destination: try RelativePath("clips/source.mov"), size: meta.size,
                              modifiedNanos: meta.modifiedNanos, mayResume: false), source)
    }

    @Test("the final name appears only when the upload is complete")
    func finalNameOnlyAtTheEnd() async throws {
        let root = TemporaryDirectory()
        let scratch = TemporaryDirectory()
        let (request, _) = try makeSource(scratch, size: 5 << 20)
        let watcher = FinalNameWatcher(finalPath: root.path + "/clips/source.mov")
        _ = try await LocalBackend(root: root.path).upload(request, observer: watcher)
        #expect(watcher.chunks.withLock { $0 } >= 5)
        #expect(!watcher.sawFinalName.withLock { $0 })
        #expect(FileManager.default.fileExists(atPath: root.path + "/clips/source.mov"))
    }

    @Test("a source rewritten in place during the copy is never put under the final name")
    func rewriteInPlaceIsRefused() async throws {
        let root = TemporaryDirectory()
        let scratch = TemporaryDirectory()
        let (request, source) = try makeSource(scratch, size: 5 << 20)
        await #expect(throws: BackendError.self) {
            _ = try await LocalBackend(root: root.path).upload(request, observer: RewriteInPlace(source: source))
        }
        #expect(!FileManager.default.fileExists(atPath: root.path + "/clips/source.mov"))
    }

    /// Past 8 MiB windows the copy sends pages to disk as it goes (`WriteBehind`): the
    /// continued copy starts inside a window and ends past three, not on a window's edge.
    @Test("an interrupted upload continues from its temporary file when allowed")
    func resumesWhenAllowed() async throws {
        let root = TemporaryDirectory()
        let scratch = TemporaryDirectory()
        let size = (27 << 20) + 4_321
        var (request, source) = try makeSource(scratch, size: size)
        let backend = LocalBackend(root: root.path)
        await #expect(throws: BackendError.self) {
            _ = try await backend.upload(request, observer: StopAfter(bytes: 2 << 20))
        }
        #expect(!FileManager.default.fileExists(atPath: root.path + "/clips/source.mov"))
        let partial = root.path + "/clips/" + TemporaryName.for("source.mov")
        let partialSize = try #require(try LocalFileSystem.metadata(partial)).size
        #expect(partialSize == 2 << 20)
        #expect(try backend.visibleNames(in: RelativePath("clips")).isEmpty)

        request.mayResume = true
        let result = try await backend.upload(request, observer: NullTransferObserver())
        #expect(result.resumedFrom == partialSize)
        #expect(result.bytesSent == Int64(size) - partialSize)
        #expect(try TreeComparison.sameContent(source, root.path + "/clips/source.mov"))
        #expect(try LocalFileSystem.metadata(partial) == nil)
        let placed = try #require(try LocalFileSystem.metadata(root.path + "/clips/source.mov"))
        #expect(placed.modifiedNanos == request.modifiedNanos)
    }

    @Test("without permission to resume, the upload starts over")
    func restartsWhenNotAllowed() async throws {
        let root = TemporaryDirectory()
        let scratch = TemporaryDirectory()
        let (request, source) = try makeSource(scratch, size: 3 << 20)
        let backend = LocalBackend(root: root.path)
        try FileManager.default.createDirectory(atPath: root.path + "/clips", withIntermediateDirectories: true)
        try Data(repeating: 0xAB, count: 1 << 20).write(to: URL(fileURLWithPath: root.path + "/clips/" + TemporaryName.for("source.mov")))
        let result = try await backend.upload(request, observer: NullTransferObserver())
        #expect(result.resumedFrom == 0)
        #expect(try TreeComparison.sameContent(source, root.path + "/clips/source.mov"))
    }
}

extension LocalBackend {
    /// Synchronous listing for assertions.
    func visibleNames(in path: RelativePath) throws -> [String] {
        try LocalFileSystem.directoryEntries(root + "/" + path.string).filter { !TemporaryName.isTemporary($0) }
    }
}
