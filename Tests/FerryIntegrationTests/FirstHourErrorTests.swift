import FerryTestSupport
import Foundation
import Testing

/// The mistakes a new user makes, each answered by one line that says what to do, and
/// help texts that read well at 80 columns.
@Suite struct FirstHourErrorTests {
    private func config(_ work: Workspace, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
    }

    private func oneLine(_ result: FerryProcess.Result, exit: Int32 = 2, saying words: [String]) {
        #expect(result.status == exit, "\(result.diagnostics)")
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 1, "\(result.standardError)")
        #expect(lines.first?.hasPrefix("ferry: ") == true, "\(result.standardError)")
        for word in words { #expect(result.standardError.contains(word), "missing '\(word)' in \(result.standardError)") }
    }

    @Test func unknownURLSchemeListsTheSchemes() async throws {
        let work = Workspace()
        try FileManager.default.createDirectory(atPath: work.source, withIntermediateDirectories: true)
        let result = try await work.ferry(["push", "src", "--to", "webdav://127.0.0.1/x", "--state", work.state])
        oneLine(result, saying: ["'webdav://'", "dav://, davs://", "http://, https://"])
    }

    @Test func passwordInTheConfigSaysWherePasswordsGo() async throws {
        let work = Workspace()
        try config(work, "remotes:\n  nas:\n    type: webdav\n    url: http://127.0.0.1:1/dav\n    user: me\n    password: hunter2\n")
        oneLine(try await work.ferry(["push"]), saying: ["config.yml:6", "password_env", "password_file"])
    }

    @Test func misspelledKeysGetTheNearOne() async throws {
        let work = Workspace()
        try config(work, "remotes:\n  nas:\n    typ: webdav\n    url: http://127.0.0.1:1/dav\n")
        oneLine(try await work.ferry(["push"]), saying: ["config.yml:3", "did you mean 'type'?"])
        try config(work, "transfer:\n  max: 2\n")
        oneLine(try await work.ferry(["push"]), saying: ["did you mean 'transfers'?"])
    }

    @Test func tabInTheIndentationIsCalledATab() async throws {
        let work = Workspace()
        try config(work, "remotes:\n\tnas:\n    type: local\n")
        oneLine(try await work.ferry(["push"]), saying: ["config.yml:2", "tab", "spaces"])
    }

    @Test func aFolderNameThatIsNotConfiguredIsNotTakenAsAPath() async throws {
        let work = Workspace()
        try config(work, "remotes:\n  nas:\n    type: local\n    path: ./backup\nfolders:\n  photos:\n    path: ./phone\n    remote: nas\n")
        oneLine(try await work.ferry(["push", "phots", "--to", "nas"]), saying: ["'phots'", "photos"])
    }

    @Test func argumentErrorsSayFerryLikeEveryOtherError() async throws {
        let result = try await Workspace().ferry(["push", "--transfers", "0"])
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix("ferry: "), "\(result.standardError)")
    }

    @Test func davsToAPlainHTTPServerSaysItDoesNotSpeakTLS() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try FileManager.default.createDirectory(atPath: work.source, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: work.source + "/a.jpg"))
        let url = server.url("/dav/").replacingOccurrences(of: "http://", with: "davs://")
        let result = try await work.ferry(["push", "src", "--to", url, "--state", work.state])
        #expect(result.status != 0)
        #expect(result.standardError.contains("does not speak TLS"), "\(result.diagnostics)")
        #expect(!result.standardError.contains("ca_file"), "\(result.diagnostics)")
    }

    /// Each paragraph of a help text is one line in the source, so it wraps at any width;
    /// a hard break inside a sentence shows as a stub line after a full one.
    @Test(arguments: ["push", "pull", "sync", "resolve", "verify", "status", "forget", "retry", "doctor", "ls",
                      "watch", "daemon", "init"])
    func helpWrapsCleanly(command: String) async throws {
        let result = try await Workspace().ferry([command, "--help"])
        #expect(result.status == 0, "\(result.diagnostics)")
        let lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // A stub after a full line, then more text of the same paragraph: the source broke a sentence.
        for index in 0..<max(0, lines.count - 2) {
            let (full, stub, next) = (lines[index], lines[index + 1], lines[index + 2])
            let broken = full.count >= 60 && !stub.isEmpty && stub.count < 25 && !stub.hasPrefix(" ")
                && !next.isEmpty && !next.hasPrefix(" ") && !next.hasSuffix(":")
            #expect(!broken, "broken wrap in \(command) --help:\n\(full)\n\(stub)\n\(next)")
        }
        #expect(!result.standardOutput.contains("in the background"))
    }

    /// `--delete` mirrors a one-way copy; a sync always carries deletions over, so its help
    /// does not offer the flag (typing it still says why it is not needed).
    @Test(arguments: [("push", true), ("pull", true), ("watch", true), ("sync", false)])
    func deleteIsOfferedWhereItMeansSomething(command: String, offered: Bool) async throws {
        let result = try await Workspace().ferry([command, "--help"])
        #expect(result.status == 0, "\(result.diagnostics)")
        #expect(result.standardOutput.contains("--delete ") == offered, "\(result.standardOutput)")
        #expect(result.standardOutput.contains("--max-delete"), "\(result.standardOutput)")
    }
}
