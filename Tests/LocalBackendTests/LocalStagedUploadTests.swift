import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import LocalBackend
import Synchronization
import Testing

/// Small uploads written first and published in a batch: nothing under a final name
/// before the batch is published, then every file under its name with its time.
@Suite("LocalBackend staged uploads")
struct LocalStagedUploadTests {
    static func request(_ scratch: TemporaryDirectory, _ name: String, seed: UInt64) throws -> UploadRequest {
        let source = scratch.child(name.replacingOccurrences(of: "/", with: "_"))
        try TreeGenerator.write(at: source, size: 4096, seed: seed, modified: 1_700_000_000.75)
        let meta = try #require(try LocalFileSystem.metadata(source))
        return UploadRequest(source: source, destination: try RelativePath(name), size: meta.size, modifiedNanos: meta.modifiedNanos,
                             mayResume: false)
    }

    /// An empty remote folder, its backend, and a scratch folder for the sources, named
    /// after the test.
    static func folders(_ name: String) -> (root: TemporaryDirectory, scratch: TemporaryDirectory, backend: LocalBackend) {
        let root = TemporaryDirectory("ferry-\(name)-root")
        return (root, TemporaryDirectory("ferry-\(name)-scratch"), LocalBackend(root: root.path))
    }

    /// Every file below `root`, folders left out.
    static func files(below root: TemporaryDirectory) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: root.path).filter { name in
            try LocalFileSystem.metadata(root.child(name))?.kind == .file
        }.sorted()
    }

    @Test("a staged upload waits with no name; publishing puts the batch under final names, with times, and leaves no temporary file")
    func stagedThenPublished() async throws {
        let (root, scratch, backend) = Self.folders("staged")
        let names = ["a/IMG_1.jpg", "a/IMG_2.jpg", "IMG_3.jpg"]
        var staged: [StagedUpload] = []
        for (index, name) in names.enumerated() {
            staged.append(try #require(try await backend.stageUpload(try Self.request(scratch, name, seed: UInt64(index)),
                                                                     observer: NullTransferObserver())))
        }
        // Written with no name: nothing under any name, final or temporary, before publishing.
        #expect(staged.allSatisfy { $0.unnamedFile != nil })
        #expect(try Self.files(below: root) == [])
        let results = try await backend.publishStaged(staged)
        #expect(results.count == names.count)
        for (index, name) in names.enumerated() {
            let published = try results[index].get()
            #expect(published.entry.path.string == name)
            #expect(try TreeComparison.sameContent(scratch.child(name.replacingOccurrences(of: "/", with: "_")), root.child(name)))
            #expect(try LocalFileSystem.metadata(root.child(name))?.modifiedNanos == published.entry.modifiedNanos)
        }
        #expect(try Self.files(below: root) == names.sorted())
    }

    @Test("a staged upload dropped without publishing leaves no file behind")
    func droppedUnpublished() async throws {
        let (root, scratch, backend) = Self.folders("staged-drop")
        var staged: StagedUpload? = try await backend.stageUpload(try Self.request(scratch, "a/IMG_1.jpg", seed: 1),
                                                                 observer: NullTransferObserver())
        #expect(staged?.unnamedFile != nil)
        staged = nil
        #expect(try Self.files(below: root) == [])
        #expect(FileManager.default.fileExists(atPath: root.child("a")), "the target's folder is made while staging")
    }

    @Test("publishing over a file already under the name replaces it; a stale temporary file is replaced too")
    func publishedOverAFile() async throws {
        let (root, scratch, backend) = Self.folders("staged-replace")
        let request = try Self.request(scratch, "a/IMG_1.jpg", seed: 7)
        let staged = try #require(try await backend.stageUpload(request, observer: NullTransferObserver()))
        // An older version under the name, and a temporary file an interrupted run left.
        try Data("old version".utf8).write(to: URL(fileURLWithPath: root.child("a/IMG_1.jpg")))
        try Data("left over".utf8).write(to: URL(fileURLWithPath: root.child(staged.temporary.string)))
        let published = try #require(try await backend.publishStaged([staged]).first).get()
        #expect(published.entry.path.string == "a/IMG_1.jpg")
        #expect(try TreeComparison.sameContent(request.source, root.child("a/IMG_1.jpg")))
        #expect(try LocalFileSystem.metadata(root.child("a/IMG_1.jpg"))?.modifiedNanos == request.modifiedNanos)
        #expect(try Self.files(below: root) == ["a/IMG_1.jpg"])
    }

    @Test("a file that cannot be put under its name fails alone; the rest of the batch is published")
    func oneFailureInABatch() async throws {
        let (root, scratch, backend) = Self.folders("staged-fail")
        let first = try #require(try await backend.stageUpload(try Self.request(scratch, "IMG_1.jpg", seed: 1), observer: NullTransferObserver()))
        let second = try #require(try await backend.stageUpload(try Self.request(scratch, "IMG_2.jpg", seed: 2), observer: NullTransferObserver()))
        // A folder with content appears under the first name between staging and publishing.
        try FileManager.default.createDirectory(atPath: root.child("IMG_1.jpg/inside"), withIntermediateDirectories: true)
        let results = try await backend.publishStaged([first, second])
        if case let .failure(error) = results[0] {
            #expect(error.code == .alreadyExists && error.description.contains("a folder is in the way"))
        } else {
            Issue.record("a file was published over a folder")
        }
        #expect(!FileManager.default.fileExists(atPath: root.child(first.temporary.string)), "the refused file's temporary copy is left")
        #expect(try results[1].get().entry.path.string == "IMG_2.jpg")
        #expect(FileManager.default.fileExists(atPath: root.child("IMG_2.jpg")))
        #expect(FileManager.default.fileExists(atPath: root.child("IMG_1.jpg/inside")), "the folder in the way is left alone")
    }

    @Test("an upload onto a folder fails with alreadyExists and leaves nothing beside it")
    func uploadOntoAFolder() async throws {
        let (root, scratch, backend) = Self.folders("upload-folder")
        try FileManager.default.createDirectory(atPath: root.child("a/IMG_1.jpg/inside"), withIntermediateDirectories: true)
        let request = try Self.request(scratch, "a/IMG_1.jpg", seed: 1)
        do {
            _ = try await backend.upload(request, observer: NullTransferObserver())
            Issue.record("a file was uploaded over a folder")
        } catch {
            #expect(error.code == .alreadyExists)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.child("a")) == ["IMG_1.jpg"])
        #expect(FileManager.default.fileExists(atPath: root.child("a/IMG_1.jpg/inside")))
    }

    /// Does `change` to the source once the first bytes are copied.
    final class ChangingObserver: TransferObserver {
        let change: @Sendable () -> Void
        let done = Mutex(false)

        init(_ change: @escaping @Sendable () -> Void) {
            self.change = change
        }

        func bytesTransferred(_ count: Int) -> Duration {
            let first = done.withLock { done in
                defer { done = true }
                return !done
            }
            if first { change() }
            return .zero
        }

        var isCancelled: Bool { false }
        func uploadCheckpoint(_ state: String) async {}
    }

    @Test("a source rewritten, or replaced by another file of the same size and time, while it is copied is not staged",
          arguments: ["rewritten", "replaced"])
    func sourceChangedWhileCopied(how: String) async throws {
        let (root, scratch, backend) = Self.folders("staged-changed")
        let request = try Self.request(scratch, "IMG_1.jpg", seed: 1)
        let source = request.source
        let observer = ChangingObserver {
            if how == "rewritten" {
                try? TreeGenerator.write(at: source, size: 4096, seed: 2, modified: 1_700_000_100)
            } else {
                // Another file, made to look like the one scanned, renamed over it.
                try? TreeGenerator.write(at: source + ".other", size: 4096, seed: 3, modified: 1_700_000_000.75)
                _ = rename(source + ".other", source)
            }
        }
        do {
            _ = try await backend.stageUpload(request, observer: observer)
            Issue.record("a source \(how) during the copy was staged")
        } catch {
            #expect(error.code == .changedDuringTransfer, "\(error)")
        }
        #expect(observer.done.withLock { $0 }, "the copy never reported its bytes")
        #expect(try Self.files(below: root) == [])
    }

    @Test("names another backend left are refused before anything is published, and flushNames refuses them too")
    func foreignNamesRefused() async throws {
        let (root, scratch, backend) = Self.folders("staged-foreign")
        let staged = try #require(try await backend.stageUpload(try Self.request(scratch, "IMG_1.jpg", seed: 1),
                                                                observer: NullTransferObserver()))
        let foreign = UnflushedNames("a token some other backend made")
        await #expect(throws: BackendError.self) { _ = try await backend.publishStaged([staged], after: foreign) }
        #expect(try Self.files(below: root) == [], "nothing is named when the earlier names cannot be flushed")
        await #expect(throws: BackendError.self) { try await backend.flushNames(foreign) }
        // Its own names and none at all are taken as before.
        let (results, names) = try await backend.publishStaged([staged], after: UnflushedNames.none)
        #expect(results.count == 1)
        try await backend.flushNames(names)
        try await backend.flushNames(.none)
        #expect(try Self.files(below: root) == ["IMG_1.jpg"])
    }
}
