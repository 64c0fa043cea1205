import CurlTransport
import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Testing

@testable import WebDAVBackend

/// `uploadNow`, the small-file upload on the caller's blocking thread, on real servers
/// behind a request-counting proxy.
@Suite("WebDAV uploads in one trip to a blocking thread", .integration)
struct WebDAVDirectUploadTests {
    let scratch = TemporaryDirectory("ferry-webdav-direct")

    func request(_ name: String, seed: UInt64, modifiedNanos: Int64? = nil, expectsNewFile: Bool = false) throws -> UploadRequest {
        let source = scratch.child(name.replacingOccurrences(of: "/", with: "_"))
        try TreeGenerator.write(at: source, size: 3000 + Int(seed), seed: seed, modified: 1_700_000_000 + Double(seed))
        let meta = try #require(try LocalFileSystem.metadata(source))
        return UploadRequest(source: source, destination: try RelativePath(name), size: meta.size,
                             modifiedNanos: modifiedNanos ?? meta.modifiedNanos, mayResume: false, expectsNewFile: expectsNewFile)
    }

    /// A server that keeps the `Date` of a PUT as the file's time, has no dead properties,
    /// and whose PUT is atomic (the probe's `atomicPut`).
    @Test("on nginx: declined until the usual path made the folder and learnt the server, then one PUT to the name (a new name: PUT and MOVE)")
    func nginxSendsDirectlyOnceLearnt() async throws {
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let backend = try WebDAVBackend(baseURL: proxy.url("/dav/direct/"), settings: CurlTransportSettings())

        #expect(try backend.uploadNow(try request("a/IMG_0.jpg", seed: 0), observer: NullTransferObserver()) == nil)
        #expect(proxy.requests.isEmpty, "a declined upload sends nothing: \(proxy.requests)")
        for index in 1...UploadConfirmation.learningUploads {
            _ = try await backend.upload(try request("a/IMG_\(index).jpg", seed: UInt64(index)), observer: NullTransferObserver())
        }

        let before = proxy.requests.count
        let sent = try request("a/IMG_9.jpg", seed: 9)
        let result = try #require(try backend.uploadNow(sent, observer: NullTransferObserver()))
        #expect(result.verifiedSource)
        #expect(proxy.requests.dropFirst(before).map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
                    == ["PUT /dav/direct/a/IMG_9.jpg"], "\(proxy.requests.dropFirst(before))")
        let stored = server.directory + "/root/direct/a/IMG_9.jpg"
        #expect(try TreeComparison.sameContent(sent.source, stored))
        let listed = try #require(try await backend.stat(sent.destination))
        #expect(listed.size == result.entry.size && listed.modifiedNanos == result.entry.modifiedNanos,
                "the prediction is what a listing shows")

        // A new name is taken only if still free: MOVE with `Overwrite: F`.
        let afterDirect = proxy.requests.count
        let new = try request("a/IMG_10.jpg", seed: 10, expectsNewFile: true)
        #expect(try backend.uploadNow(new, observer: NullTransferObserver())?.verifiedSource == true)
        #expect(proxy.requests.dropFirst(afterDirect).map { String($0.split(separator: " ")[0]) } == ["PUT", "MOVE"],
                "\(proxy.requests.dropFirst(afterDirect))")
        #expect(try TreeComparison.sameContent(new.source, server.directory + "/root/direct/a/IMG_10.jpg"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.directory + "/root/direct/a")
            .allSatisfy { !TemporaryName.isTemporary($0) })
    }

    @Test("on nginx: a new file whose source changed is not put in place, and its temporary file is removed")
    func changedSourceIsNotMoved() async throws {
        let server = try await TestServer(.nginx)
        let backend = try WebDAVBackend(baseURL: server.url("/dav/changed/"), settings: CurlTransportSettings())
        for index in 1...UploadConfirmation.learningUploads {
            _ = try await backend.upload(try request("IMG_\(index).jpg", seed: UInt64(index)), observer: NullTransferObserver())
        }
        let stale = try request("IMG_5.jpg", seed: 5, modifiedNanos: 1_600_000_000_000_000_000, expectsNewFile: true)
        #expect(throws: BackendError.self) { _ = try backend.uploadNow(stale, observer: NullTransferObserver()) }
        let names = try FileManager.default.contentsOfDirectory(atPath: server.directory + "/root/changed")
        #expect(!names.contains("IMG_5.jpg") && names.allSatisfy { !TemporaryName.isTemporary($0) }, "\(names)")

        // Sent straight to its name, the body is cut off before its last bytes: the server
        // keeps the file it had (nginx would have dated a stored PUT from its `Date`).
        let stored = server.directory + "/root/changed/IMG_1.jpg"
        let before = try #require(try LocalFileSystem.metadata(stored))
        let replaced = try request("IMG_1.jpg", seed: 1, modifiedNanos: 1_600_000_000_000_000_000)
        #expect {
            _ = try backend.uploadNow(replaced, observer: NullTransferObserver())
        } throws: { ($0 as? BackendError)?.code == .changedDuringTransfer }
        #expect(try LocalFileSystem.metadata(stored)?.modifiedNanos == before.modifiedNanos)
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.directory + "/root/changed")
            .allSatisfy { !TemporaryName.isTemporary($0) })
    }

    /// nginx makes a PUT's missing folders itself; other servers (Nextcloud) answer 409,
    /// played here by the proxy.
    @Test("a 409 to the PUT (the folder went) declines the upload, which the usual path then makes")
    func vanishedFolderDeclines() async throws {
        let server = try await TestServer(.nginx)
        /// The probe and the learning uploads, as a fresh backend makes them into `folder`.
        func learn(_ proxy: FaultProxy, _ folder: String) async throws -> WebDAVBackend {
            let backend = try WebDAVBackend(baseURL: proxy.url("/dav/\(folder)/"), settings: CurlTransportSettings())
            for index in 1...UploadConfirmation.learningUploads {
                _ = try await backend.upload(try request("b/IMG_\(index).jpg", seed: UInt64(index)), observer: NullTransferObserver())
            }
            return backend
        }
        // How many PUTs that takes (the probe sends some), so the next one can be refused.
        let counting = try await FaultProxy(upstream: server.origin, share: 0)
        _ = try await learn(counting, "counted")
        // The probe's cut-off PUT never reaches a script: the proxy passes the cut on as it is.
        let puts = counting.requests.filter { $0.hasPrefix("PUT ") && !$0.contains(" cut ") }.count
        let proxy = try await FaultProxy(upstream: server.origin, share: 0,
                                         options: ["--script", "PUT=" + Array(repeating: "ok", count: puts).joined(separator: ",") + ",409"])
        let backend = try await learn(proxy, "gone")

        let sent = try request("b/IMG_7.jpg", seed: 7)
        #expect(try backend.uploadNow(sent, observer: NullTransferObserver()) == nil)
        #expect(proxy.requests.last?.hasPrefix("PUT ") == true && proxy.requests.last?.hasSuffix(" 409") == true, "\(proxy.requests)")
        #expect(!backend.knownFolders.contains(try RelativePath("b")), "the folder is made again before the next upload into it")
        _ = try await backend.upload(sent, observer: NullTransferObserver())
        #expect(try TreeComparison.sameContent(sent.source, server.directory + "/root/gone/b/IMG_7.jpg"))
    }

    /// Apache ignores a PUT's `Date`: each upload sets Ferry's time property, which the
    /// usual path does.
    @Test("on Apache: every upload goes the usual way, with its PROPPATCH")
    func apacheDeclines() async throws {
        let server = try await TestServer(.apache)
        let backend = try WebDAVBackend(baseURL: server.url("/dav/usual/"), settings: CurlTransportSettings())
        for index in 1...UploadConfirmation.learningUploads {
            _ = try await backend.upload(try request("IMG_\(index).jpg", seed: UInt64(index)), observer: NullTransferObserver())
        }
        #expect(try backend.uploadNow(try request("IMG_8.jpg", seed: 8), observer: NullTransferObserver()) == nil)
    }
}
