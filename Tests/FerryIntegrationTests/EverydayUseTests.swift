import FerryTestSupport
import Foundation
import Testing

/// Issue 51, "Everyday use": mistakes refused before they cost anything, and messages
/// that say what happened. The `ferry` binary as a user runs it, real folders and servers.
@Suite("everyday use: typos refused, summaries that say where", .integration)
struct EverydayUseTests {
    private func config(_ work: Workspace, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
    }

    private func smallFolder(_ work: Workspace) throws {
        try FileManager.default.createDirectory(atPath: work.directory.child("small"), withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: URL(fileURLWithPath: work.directory.child("small/a.jpg")))
    }

    /// Everything in the workspace's folder but the folder pushed from and Ferry's state.
    private func madeHere(_ work: Workspace) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: work.directory.path)
            .filter { !["small", "state", "config.yml"].contains($0) }.sorted()
    }

    // MARK: A malformed remote is refused, never taken for a new local folder

    @Test("a remote that looks like a URL or NAME: is refused with the nearest spelling, and nothing is made",
          arguments: [
              ("s3:/ferry/x", "did you mean s3://ferry/x?"),
              ("s3:ferry/x", "did you mean s3://ferry/x?"),
              ("dav//host/x", "did you mean dav://host/x?"),
              ("https:/host/files", "did you mean https://host/files?"),
              ("nass:photos", "did you mean nas:photos?"),
              ("phone:photos", "no remote named 'phone' (remotes: nas)"),
          ])
    func malformedRemoteIsRefused(typed: String, saying: String) async throws {
        let work = Workspace()
        try smallFolder(work)
        try config(work, "remotes:\n  nas:\n    type: local\n    path: ./backup\n")
        for command in [["push", "small", "--to", typed], ["pull", "small", "--from", typed], ["sync", "small", "--to", typed]] {
            let result = try await work.ferry(command + ["--state", work.state])
            #expect(result.status == 2, "\(command): \(result.diagnostics)")
            let lines = result.standardError.split(separator: "\n")
            #expect(lines.count == 1 && lines.first?.hasPrefix("ferry: ") == true, "\(result.standardError)")
            #expect(result.standardError.contains(saying), "\(command): \(result.standardError)")
            #expect(!result.standardOutput.contains("uploaded"), "\(result.diagnostics)")
        }
        #expect(try madeHere(work) == [], "a folder was made for a mistyped remote")
    }

    @Test("a local path that starts with ./ may hold a colon; the summary names it as typed")
    func dotSlashPathWithAColonIsAFolder() async throws {
        let work = Workspace()
        try smallFolder(work)
        let result = try await work.ferry(["push", "small", "--to", "./s3:odd", "--state", work.state])
        #expect(result.status == 0, "\(result.diagnostics)")
        #expect(result.standardOutput.hasPrefix("push small → ./s3:odd: 1 uploaded"), "\(result.diagnostics)")
        #expect(FileManager.default.fileExists(atPath: work.directory.child("s3:odd/a.jpg")))
    }

    @Test("every summary says where the files went: a configured folder by its remote, an ad-hoc pair as typed")
    func summariesSayWhereTheFilesWent() async throws {
        let work = Workspace()
        try smallFolder(work)
        try config(work, """
            remotes:
              nas:
                type: local
                path: ./backup
            folders:
              photos:
                path: ./small
                remote: nas
                remote_path: phone
            """)
        let configured = try await work.ferry(["push", "photos", "--state", work.state])
        #expect(configured.status == 0, "\(configured.diagnostics)")
        #expect(configured.standardOutput.hasPrefix("push photos → nas:phone: 1 uploaded"), "\(configured.diagnostics)")

        let adHoc = try await work.ferry(["push", "small", "--to", "elsewhere", "--state", work.state])
        #expect(adHoc.standardOutput.hasPrefix("push small → elsewhere: 1 uploaded"), "\(adHoc.diagnostics)")
        #expect(!adHoc.standardOutput.contains("ad-hoc"), "\(adHoc.diagnostics)")

        let dryRun = try await work.ferry(["pull", "./pulled", "--from", "elsewhere", "--dry-run", "--state", work.state])
        #expect(dryRun.standardOutput.contains("pull ./pulled ← elsewhere: dry run"), "\(dryRun.diagnostics)")
    }

    // MARK: An unknown host name

    @Test("a host name that does not resolve is said so by push, pull and ls alike, never as a bad libcurl argument")
    func unknownHostIsSaidToNotResolve() async throws {
        let work = Workspace()
        try smallFolder(work)
        // `.invalid` never resolves (RFC 2606).
        let url = "dav://no-such-host.invalid/dav/x"
        for command in [["push", "small", "--to", url], ["pull", "small", "--from", url], ["ls", url]] {
            let result = try await work.ferry(command + ["--state", work.state])
            #expect(result.status != 0, "\(command): \(result.diagnostics)")
            #expect(result.standardError.contains("the host name 'no-such-host.invalid' could not be resolved"),
                    "\(command): \(result.diagnostics)")
            #expect(!result.standardError.contains("bad argument") && !result.standardError.contains("refused an option"),
                    "\(command): \(result.diagnostics)")
        }
    }
}
