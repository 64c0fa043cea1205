import FerryPluginAPI
import FerrySystem
import FerryTestSupport
import Foundation
import Testing

@testable import S3Backend

/// What libcurl really sends with a signed PUT, seen by a server that logs it
/// (hostile-server.py's `put` mode): a small file goes at once, without `Expect:
/// 100-continue` and the round trip it waits for; a larger one keeps it, so a store that
/// refuses the request does so before the body is sent.
@Suite("S3 PUTs and Expect: 100-continue", .integration)
struct S3ExpectContinueTests {
    @Test("a small signed PUT carries no Expect header; one above 1 MiB keeps Expect: 100-continue")
    func smallPutsDoNotWait() async throws {
        let server = try await HostileServer("put")
        let addressing = try S3Addressing(endpoint: server.origin, bucket: S3TestServer.bucket, prefix: "expect", virtualHost: false)
        let credentials = S3Credentials(accessKeyID: S3TestServer.accessKey, secretAccessKey: S3TestServer.secretKey, source: "the test")
        let backend = S3Backend(configuration: S3RemoteConfiguration(addressing: addressing, region: "us-east-1", credentials: credentials))
        let scratch = TemporaryDirectory("ferry-s3-expect")
        for (name, size) in [("small.jpg", 4096), ("exactly-1MiB.jpg", 1 << 20), ("larger.jpg", (1 << 20) + 1)] {
            let path = scratch.child(name)
            try TreeGenerator.write(at: path, size: size, seed: UInt64(size))
            let meta = try #require(try LocalFileSystem.metadata(path))
            let result = try await backend.upload(UploadRequest(source: path, destination: try RelativePath(name), size: meta.size,
                                                                modifiedNanos: meta.modifiedNanos, mayResume: false),
                                                  observer: NullTransferObserver())
            #expect(result.bytesSent == Int64(size))
        }
        let puts = server.requests.filter { $0.hasPrefix("PUT ") }
        #expect(puts.count == 3, "\(puts)")
        #expect(puts.filter { $0.contains("/small.jpg ") || $0.contains("/exactly-1MiB.jpg ") }.allSatisfy { !$0.contains("expect=") }, "\(puts)")
        #expect(puts.filter { $0.contains("/larger.jpg ") }.allSatisfy { $0.hasSuffix("expect=100-continue") }, "\(puts)")
    }
}
