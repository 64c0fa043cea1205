import CurlTransport
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

@testable import WebDAVBackend
import FerrySystem

/// Digest (Apache `/digest/`) and bearer (nginx `/bearer/`) authentication against the
/// test servers, through the same option parsing a config.yml remote goes through.
@Suite("WebDAV authentication against real servers", .serialized, .integration)
struct WebDAVAuthTests {
    static let wrongPassword = "wrong-Pa55word-x7"

    /// A backend built from plugin options, as `type: webdav` in config.yml builds one.
    func backend(_ url: String, options: [String: String], environment: [String: String]) throws -> WebDAVBackend {
        let settings = BackendSettings(remoteName: "nas", options: options.merging(["url": url]) { $1 })
        return try WebDAVBackend(baseURL: url, settings: try RemoteTransportOptions.transportSettings(settings, environment: environment))
    }

    /// Upload (large enough for Expect: 100-continue and the probe), list, download.
    func roundTrip(_ backend: WebDAVBackend, scratch: TemporaryDirectory) async throws {
        let source = scratch.child("IMG_1.jpg")
        try TreeGenerator.write(at: source, size: 3 << 20, seed: 5)
        let meta = try #require(try LocalFileSystem.metadata(source))
        let request = UploadRequest(source: source, destination: try RelativePath("auth/IMG_1.jpg"), size: meta.size,
                                    modifiedNanos: meta.modifiedNanos, mayResume: false)
        _ = try await backend.upload(request, observer: NullTransferObserver())
        let listed = try await backend.list(RelativePath("auth"))
        #expect(listed.map(\.path.string) == ["auth/IMG_1.jpg"])
        let partial = scratch.child("downloaded")
        try Data().write(to: URL(fileURLWithPath: partial))  // the core creates it; backends open it
        _ = try await backend.download(DownloadRequest(source: listed[0].path, partialFile: partial, offset: 0, expected: listed[0]),
                                       observer: NullTransferObserver())
        #expect(try Data(contentsOf: URL(fileURLWithPath: partial)) == Data(contentsOf: URL(fileURLWithPath: source)))
    }

    /// A refused operation: `authenticationFailed`, the "check" hint, not worth retrying,
    /// no secret in the text, and only the requests the auth scheme needs. The wrong
    /// credentials go through a counting proxy: its line for a request is written before
    /// the client hears the answer, so the count is exact the moment the operation returns.
    func expectRefused(_ proxy: FaultProxy, secret: String, maxRequests: Int,
                       _ operation: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let before = proxy.requests.count
        do {
            try await operation()
            Issue.record("the server accepted wrong credentials", sourceLocation: sourceLocation)
        } catch let error as BackendError {
            #expect(error.code == .authenticationFailed, "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains("check this remote's user and password or bearer token"), "\(error)", sourceLocation: sourceLocation)
            #expect(!error.isRetryable, sourceLocation: sourceLocation)
            #expect(!"\(error)".contains(secret) && !String(reflecting: error).contains(secret), sourceLocation: sourceLocation)
        }
        let requests = proxy.requests.dropFirst(before)
        #expect(requests.count >= 1 && requests.count <= maxRequests, "\(requests)", sourceLocation: sourceLocation)
    }

    func expectNoSecretInLogs(_ server: TestServer, _ secret: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for log in ["access.log", "error.log"] {
            let text = (try? String(contentsOfFile: server.directory + "/" + log, encoding: .utf8)) ?? ""
            #expect(!text.contains(secret), "\(log) holds the secret", sourceLocation: sourceLocation)
        }
    }

    @Test("Apache digest: the right password lists, uploads and downloads; a wrong one is refused at once")
    func digest() async throws {
        let server = try await TestServer(.apache)
        let scratch = TemporaryDirectory("ferry-dav-digest")
        let options = ["user": "ferry", "password_env": "DAV_PASSWORD", "auth": "digest"]
        let good = try backend(server.url("/digest/d/"), options: options, environment: ["DAV_PASSWORD": "secret"])
        try await roundTrip(good, scratch: scratch)
        let digestRequests = server.accessLog.filter { $0.hasSuffix(" ferry") }
        #expect(!digestRequests.isEmpty, "no request authenticated as ferry")

        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let bad = try backend(proxy.url("/digest/d/"), options: options, environment: ["DAV_PASSWORD": Self.wrongPassword])
        // Digest needs two requests: the challenge, then the refused answer.
        try await expectRefused(proxy, secret: Self.wrongPassword, maxRequests: 2) {
            _ = try await bad.list(.root)
        }
        try await expectRefused(proxy, secret: Self.wrongPassword, maxRequests: 4) {
            let source = scratch.child("other.jpg")
            try TreeGenerator.write(at: source, size: 1000, seed: 6)
            let meta = try #require(try LocalFileSystem.metadata(source))
            _ = try await bad.upload(UploadRequest(source: source, destination: try RelativePath("auth/other.jpg"), size: meta.size,
                                                   modifiedNanos: meta.modifiedNanos, mayResume: false),
                                     observer: NullTransferObserver())
        }
        expectNoSecretInLogs(server, Self.wrongPassword)
        expectNoSecretInLogs(server, "secret")
    }

    @Test("nginx bearer: the right token lists, uploads and downloads; a wrong one is refused at once")
    func bearer() async throws {
        let server = try await TestServer(.nginx)
        let scratch = TemporaryDirectory("ferry-dav-bearer")
        let token = try String(contentsOfFile: server.directory + "/bearer-token", encoding: .utf8)
        let options = ["auth": "bearer", "token_env": "DAV_TOKEN"]
        let good = try backend(server.url("/bearer/b/"), options: options, environment: ["DAV_TOKEN": token])
        try await roundTrip(good, scratch: scratch)

        let wrongToken = "ferry-not-the-token-" + String(token.suffix(6))
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let bad = try backend(proxy.url("/bearer/b/"), options: options, environment: ["DAV_TOKEN": wrongToken])
        try await expectRefused(proxy, secret: wrongToken, maxRequests: 1) {
            _ = try await bad.list(.root)
        }
        try await expectRefused(proxy, secret: wrongToken, maxRequests: 3) {
            try await bad.makeDirectory(RelativePath("auth/new"))
        }
        expectNoSecretInLogs(server, token)
        expectNoSecretInLogs(server, wrongToken)

        // Without a token at all the same location refuses too: the check is real.
        let anonymous = try WebDAVBackend(baseURL: server.url("/bearer/b/"), settings: CurlTransportSettings())
        await #expect { _ = try await anonymous.list(.root) } throws: {
            ($0 as? BackendError)?.code == .authenticationFailed
        }
    }

    @Test("basic auth on /private/ keeps working on both servers", arguments: TestServer.Kind.webDAV)
    func basic(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        let scratch = TemporaryDirectory("ferry-dav-basic")
        let options = ["user": "ferry", "password_env": "DAV_PASSWORD"]
        let good = try backend(server.url("/private/p/"), options: options, environment: ["DAV_PASSWORD": "secret"])
        try await roundTrip(good, scratch: scratch)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let bad = try backend(proxy.url("/private/p/"), options: options, environment: ["DAV_PASSWORD": Self.wrongPassword])
        try await expectRefused(proxy, secret: Self.wrongPassword, maxRequests: 1) {
            _ = try await bad.list(.root)
        }
    }
}
