import CurlTransport
@testable import FerryEncryption
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import LocalBackend
import Testing
import WebDAVBackend

/// A local folder as a backend that reads an upload only from its source file (as S3 and
/// exec plugins do): the encrypted backend must write a scratch file for it.
struct FileOnlyBackend: WrapsBackend {
    let inner: LocalBackend
    func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        precondition(request.content == nil, "content sent to a backend that does not take it")
        return try await inner.upload(request, observer: observer)
    }
}

/// An encrypted upload goes the way the backend underneath sends small files: staged and
/// published in a batch on a local disk, in one blocking call on a WebDAV server.
@Suite struct EncryptedUploadWaysTests {
    let directory = TemporaryDirectory("ferry-encrypted-ways")

    func encrypted(_ inner: any Backend) throws -> EncryptedBackend {
        let key = directory.child("key")
        if !FileManager.default.fileExists(atPath: key) { try MasterKey.generate(at: key) }
        return try EncryptedBackend(wrapping: inner, settings: EncryptionSettings(key: .keyFile(key), names: .encrypted),
                                    remoteName: "vault")
    }

    func request(_ name: String, seed: UInt64) throws -> UploadRequest {
        let source = directory.child("source-" + name.replacingOccurrences(of: "/", with: "_"))
        try TreeGenerator.write(at: source, size: 5000 + Int(seed), seed: seed, modified: 1_700_000_000 + Double(seed))
        let meta = try #require(try LocalFileSystem.metadata(source))
        return UploadRequest(source: source, destination: try RelativePath(name), size: meta.size, modifiedNanos: meta.modifiedNanos,
                             mayResume: false)
    }

    /// Fetches a file back through the encrypted backend and compares it with its source.
    func expectRoundTrip(_ backend: EncryptedBackend, _ sent: UploadRequest) async throws {
        let entry = try #require(try await backend.stat(sent.destination))
        #expect(entry.size == sent.size)
        let partial = directory.child("partial-" + UUID().uuidString)
        _ = FileManager.default.createFile(atPath: partial, contents: nil)
        _ = try await backend.download(DownloadRequest(source: sent.destination, partialFile: partial, offset: 0, expected: entry),
                                       observer: NullTransferObserver())
        #expect(try TreeComparison.sameContent(sent.source, partial), "\(sent.destination)")
    }

    @Test("over a local folder: staged with no name, published in a batch under stored names, read back as plaintext")
    func stagedOverLocal() async throws {
        let remote = directory.child("remote")
        let backend = try encrypted(LocalBackend(root: remote))
        #expect(backend.directUploadLimit == 0)
        let requests = [try request("DCIM/IMG_1.jpg", seed: 1), try request("DCIM/IMG_2.jpg", seed: 2)]
        var staged: [StagedUpload] = []
        for sent in requests {
            staged.append(try #require(try await backend.stageUpload(sent, observer: NullTransferObserver())))
        }
        for (sent, upload) in zip(requests, staged) {
            #expect(upload.result.entry.path == sent.destination && upload.result.entry.size == sent.size)
            #expect(upload.result.verifiedSource)
            #expect(upload.unnamedFile != nil, "the local disk's open file is passed on")
            #expect(!FileManager.default.fileExists(atPath: remote + "/" + upload.temporary.string))
            #expect(try await backend.stat(sent.destination) == nil, "nothing under its name before publishing")
        }
        let published = try await backend.publishStaged(staged)
        for (sent, result) in zip(requests, published) {
            let entry = try result.get().entry
            #expect(entry.path == sent.destination && entry.size == sent.size && entry.modifiedNanos == sent.modifiedNanos)
            try await expectRoundTrip(backend, sent)
        }
        let names = try FileManager.default.subpathsOfDirectory(atPath: remote)
        #expect(names.allSatisfy { !$0.contains("DCIM") && !$0.contains("IMG") && !TemporaryName.isTemporary($0) }, "\(names)")
    }

    @Test("to a backend that takes no content: a scratch file, kept from a longer upload and cut to the next, shorter one")
    func reusedScratchIsCut() async throws {
        let remote = directory.child("remote")
        let backend = try encrypted(FileOnlyBackend(inner: LocalBackend(root: remote)))
        let long = try request("long.bin", seed: 300_000)
        let short = try request("short.bin", seed: 1)
        for sent in [long, short] {
            let result = try await backend.upload(sent, observer: NullTransferObserver())
            #expect(result.entry.size == sent.size)
            try await expectRoundTrip(backend, sent)
        }
        let storedSizes = try FileManager.default.subpathsOfDirectory(atPath: remote)
            .compactMap { try LocalFileSystem.metadata(remote + "/" + $0)?.size }
        #expect(storedSizes.contains(ContentFormat.ciphertextSize(plaintextSize: short.size)), "\(storedSizes)")
    }

    /// Apache keeps times with a PROPPATCH: a small file is staged (its PUT at once, its
    /// time in the batch that publishes it: WebDAVBackend+StagedTimes.swift) and comes back
    /// with its time. Apache takes ranged PUTs: a file over the chunk size is not staged but
    /// goes in pieces, and its tail is read back and compared with the content's.
    @Test("over Apache: a small file staged, published with its time; a large one sent with upload, in ranged PUTs of the content, tail checked",
          .integration)
    func stagedOverWebDAV() async throws {
        let server = try await TestServer(.apache)
        let backend = try encrypted(try WebDAVBackend(baseURL: server.url("/dav/unstaged/"), settings: CurlTransportSettings(),
                                                      uploadChunkSize: 100_000))
        let small = try request("IMG_1.jpg", seed: 1)
        let staged = try #require(try await backend.stageUpload(small, observer: NullTransferObserver()))
        let published = try await backend.publishStaged([staged])
        let result = try published[0].get()
        #expect(result.entry.path == small.destination && result.entry.size == small.size, "the plaintext name and size")
        #expect(result.entry.modifiedNanos == small.modifiedNanos, "the time kept")
        try await expectRoundTrip(backend, small)
        let large = try request("VID_1.mp4", seed: 300_000)
        #expect(try await backend.stageUpload(large, observer: NullTransferObserver()) == nil)
        _ = try await backend.upload(large, observer: NullTransferObserver())
        try await expectRoundTrip(backend, large)
    }

    @Test("over nginx: declined before the keys are unlocked, then sent in one blocking call", .integration)
    func directOverNginx() async throws {
        let server = try await TestServer(.nginx)
        let inner = try WebDAVBackend(baseURL: server.url("/dav/direct/"), settings: CurlTransportSettings())
        let backend = try encrypted(inner)
        #expect(backend.directUploadLimit == inner.directUploadLimit)
        #expect(try backend.uploadNow(try request("a/IMG_0.jpg", seed: 0), observer: NullTransferObserver()) == nil)
        // The usual way unlocks the keys, writes the remote's header, makes the folder and
        // teaches the WebDAV backend what the server stores.
        var sent: [UploadRequest] = []
        for index in 1...3 {
            sent.append(try request("a/IMG_\(index).jpg", seed: UInt64(index)))
            _ = try await backend.upload(sent.last!, observer: NullTransferObserver())
        }
        let direct = try request("a/IMG_9.jpg", seed: 9)
        let result = try #require(try backend.uploadNow(direct, observer: NullTransferObserver()))
        #expect(result.entry.path == direct.destination && result.entry.size == direct.size && result.verifiedSource)
        for each in sent + [direct] { try await expectRoundTrip(backend, each) }
        let stored = try FileManager.default.subpathsOfDirectory(atPath: server.directory + "/root/direct")
        #expect(stored.count == 1 + 1 + 4, "the header, one folder, four files: \(stored)")
        #expect(stored.allSatisfy { !$0.contains("IMG") && !TemporaryName.isTemporary($0) }, "\(stored)")
    }
}
