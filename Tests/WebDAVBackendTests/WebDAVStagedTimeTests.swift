import CurlTransport
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Testing

@testable import WebDAVBackend

/// A source file of 3,000 bytes with its own modification time, and the request that
/// sends it to a new name.
private func newFile(_ scratch: TemporaryDirectory, _ name: String, seed: UInt64) throws -> UploadRequest {
    let source = scratch.child("source-" + name.replacingOccurrences(of: "/", with: "_"))
    try TreeGenerator.write(at: source, size: 3000, seed: seed, modified: 1_650_000_000.25 + Double(seed))
    let meta = try #require(try LocalFileSystem.metadata(source))
    return UploadRequest(source: source, destination: try RelativePath(name), size: meta.size, modifiedNanos: meta.modifiedNanos,
                         mayResume: false, expectsNewFile: true)
}

/// `METHOD RAW-PATH` of each line of a proxy's log.
private func requestLines(_ lines: some Sequence<String>) -> [String] {
    lines.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
}

@Suite("WebDAV: the time property of a small upload is kept in a batch beside the PUTs", .integration)
struct WebDAVStagedTimeTests {
    let scratch = TemporaryDirectory("ferry-webdav-staged-time")

    @Test("on Apache: staging is one PUT per file; publishing a batch lists the folder once and sends one PROPPATCH per file")
    func apacheBatch() async throws {
        let server = try await TestServer(.apache)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let backend = try WebDAVBackend(baseURL: proxy.url("/dav/staged/"), settings: CurlTransportSettings())
        _ = try await backend.discoverCapabilities()
        try await backend.makeDirectory(RelativePath("photos"))
        let requests = try (0..<6).map { try newFile(scratch, "photos/IMG_\($0).jpg", seed: UInt64($0)) }

        var start = proxy.requests.count
        var staged: [StagedUpload] = []
        for request in requests {
            staged.append(try #require(try await backend.stageUpload(request, observer: NullTransferObserver())))
        }
        var sent = requestLines(proxy.requests.dropFirst(start))
        #expect(sent == requests.map { "PUT /dav/staged/\($0.destination)" }, "one PUT each, nothing else yet: \(sent)")

        start = proxy.requests.count
        let published = try await backend.publishStaged(staged)
        sent = requestLines(proxy.requests.dropFirst(start))
        #expect(sent.filter { $0.hasPrefix("PROPFIND ") } == ["PROPFIND /dav/staged/photos/"], "one listing for the batch: \(sent)")
        #expect(sent.filter { $0.hasPrefix("PROPPATCH ") }.sorted() == requests.map { "PROPPATCH /dav/staged/\($0.destination)" }.sorted(),
                "\(sent)")
        #expect(sent.count == 1 + requests.count, "\(sent)")

        for (request, outcome) in zip(requests, published) {
            let result = try outcome.get()
            #expect(result.entry.modifiedNanos == request.modifiedNanos, "the time kept")
            #expect(result.entry.etag != nil, "the stored version, for the next run to recognise")
            let listed = try #require(try await backend.stat(request.destination))
            #expect(listed.modifiedNanos == request.modifiedNanos && listed.etag == result.entry.etag)
            #expect(try TreeComparison.sameContent(request.source, server.directory + "/root/staged/" + request.destination.description))
        }
    }

    @Test("on Apache: a lone file of a batch, or one in a folder much larger than the batch, is looked at with a PROPFIND of its own")
    func apacheFolderTooLargeToList() async throws {
        let server = try await TestServer(.apache)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let backend = try WebDAVBackend(baseURL: proxy.url("/dav/large/"), settings: CurlTransportSettings())
        _ = try await backend.discoverCapabilities()
        try await backend.makeDirectory(RelativePath("photos"))
        for index in 0..<40 {
            try Data("older \(index)".utf8).write(to: URL(fileURLWithPath: server.directory + "/root/large/photos/OLD_\(index).jpg"))
        }
        _ = try await backend.list(RelativePath("photos"))
        let requests = try (0..<2).map { try newFile(scratch, "photos/IMG_\($0).jpg", seed: UInt64($0)) }
        var staged: [StagedUpload] = []
        for request in requests {
            staged.append(try #require(try await backend.stageUpload(request, observer: NullTransferObserver())))
        }
        let start = proxy.requests.count
        let published = try await backend.publishStaged(staged)
        let sent = requestLines(proxy.requests.dropFirst(start))
        #expect(sent.filter { $0.hasPrefix("PROPFIND ") }.sorted() == requests.map { "PROPFIND /dav/large/\($0.destination)" }.sorted(),
                "40 entries to list for 2 files: \(sent)")
        for (request, outcome) in zip(requests, published) {
            #expect(try outcome.get().entry.modifiedNanos == request.modifiedNanos)
        }
    }

    @Test("on Apache: a file replaced on the server after its PUT fails its publishing (size differs), to be sent again")
    func apacheChangedBeforePublishing() async throws {
        let server = try await TestServer(.apache)
        let backend = try WebDAVBackend(baseURL: server.url("/dav/changed/"), settings: CurlTransportSettings())
        try await backend.makeDirectory(RelativePath("photos"))
        let request = try newFile(scratch, "photos/IMG_1.jpg", seed: 1)
        let staged = try #require(try await backend.stageUpload(request, observer: NullTransferObserver()))
        try Data("another writer".utf8).write(to: URL(fileURLWithPath: server.directory + "/root/changed/photos/IMG_1.jpg"))
        let published = try await backend.publishStaged([staged])
        #expect(throws: BackendError.self) { try published[0].get() }
    }

    @Test("on nginx: nothing is staged (its PUT keeps the time from Date), and nothing is sent for it")
    func nginxDoesNotStage() async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let backend = try WebDAVBackend(baseURL: proxy.url("/dav/plain/"), settings: CurlTransportSettings())
        _ = try await backend.discoverCapabilities()
        try await backend.makeDirectory(RelativePath("photos"))
        let start = proxy.requests.count
        let request = try newFile(scratch, "photos/IMG_1.jpg", seed: 1)
        #expect(try await backend.stageUpload(request, observer: NullTransferObserver()) == nil)
        #expect(proxy.requests.count == start, "\(proxy.requests.dropFirst(start))")
    }
}
