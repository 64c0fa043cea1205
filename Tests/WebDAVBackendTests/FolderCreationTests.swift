import CurlTransport
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

@testable import WebDAVBackend

/// Creating folders while other transfers (or other clients) create the same ones: one
/// MKCOL per folder in flight, and a refused MKCOL looked at again before it counts.
@Suite("WebDAV folder creation under concurrency", .integration)
struct FolderCreationTests {
    static func mkcols(_ proxy: FaultProxy) -> [String] {
        proxy.requests.filter { $0.hasPrefix("MKCOL ") }
    }

    @Test("concurrent transfers into one new folder send one MKCOL per folder, on a server that answers 409 to a second one in flight")
    func oneMKCOLPerFolder() async throws {
        let server = try await TestServer(.nginx)
        try FileManager.default.createDirectory(atPath: server.directory + "/root/race", withIntermediateDirectories: true)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0, options: ["--mkcol-race", "0.3"])
        let backend = try WebDAVBackend(baseURL: proxy.url("/dav/race/"), settings: CurlTransportSettings())
        let folders = ["n/a/b", "n/a/c", "n/d"]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<24 {
                group.addTask {
                    try await backend.makeDirectory(try RelativePath(folders[index % folders.count]))
                }
            }
            try await group.waitForAll()
        }
        let sent = Self.mkcols(proxy)
        #expect(!sent.contains { $0.contains("race 409") }, "\(sent)")
        // n, n/a, n/a/b, n/a/c, n/d: each once.
        let paths = sent.map { $0.split(separator: " ")[1] }
        #expect(paths.count == Set(paths).count, "\(sent)")
        #expect(Set(paths).count == 5, "\(sent)")
        for folder in folders {
            var isFolder: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: server.directory + "/root/race/" + folder, isDirectory: &isFolder)
                    && isFolder.boolValue)
        }
    }

    @Test("a 409 is looked at again: a folder another client created is success, one nobody created is tried once more")
    func conflictRechecked() async throws {
        let server = try await TestServer(.nginx)
        try FileManager.default.createDirectory(atPath: server.directory + "/root/other/x", withIntermediateDirectories: true)
        // Forwarded (the server creates the folder), then answered with 409.
        let created = try await FaultProxy(upstream: server.origin, share: 0, options: ["--script", "MKCOL=ok,conflict"])
        let first = try WebDAVBackend(baseURL: created.url("/dav/other/"), settings: CurlTransportSettings())
        try await first.makeDirectory(try RelativePath("x/y"))
        #expect(try await first.stat(try RelativePath("x/y"))?.kind == .directory)
        #expect(Self.mkcols(created).count == 2, "\(Self.mkcols(created))")

        // Answered with 409 without reaching the server.
        let lost = try await FaultProxy(upstream: server.origin, share: 0, options: ["--script", "MKCOL=ok,409"])
        let second = try WebDAVBackend(baseURL: lost.url("/dav/other/"), settings: CurlTransportSettings())
        try await second.makeDirectory(try RelativePath("x/z"))
        #expect(try await second.stat(try RelativePath("x/z"))?.kind == .directory)
        #expect(Self.mkcols(lost).count == 3, "\(Self.mkcols(lost))")
    }

    @Test("a file where a folder should be is an error, not a folder")
    func fileInTheWay() async throws {
        let server = try await TestServer(.nginx)
        try FileManager.default.createDirectory(atPath: server.directory + "/root/blocked", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: server.directory + "/root/blocked/x"))
        let backend = try WebDAVBackend(baseURL: server.url("/dav/blocked/"), settings: CurlTransportSettings())
        await #expect(throws: BackendError.self) { try await backend.makeDirectory(try RelativePath("x/y")) }
    }
}
