import FerryTestSupport
import Foundation
import Testing

/// What `make install` says and installs for a new user (issue 51, point 6): the scripts it
/// runs, with a controlled PATH and fake `dpkg-query`/`apt-get`; the help and the pages that
/// list the remotes a user can give.
@Suite("install hints", .integration)
struct InstallHintsTests {
    static let root = TestServer.repositoryRoot

    /// Runs `command` with exactly `environment`; its status, stdout and stderr. Waited for
    /// on a thread of its own, never on the cooperative pool.
    private func run(_ command: [String], environment: [String: String], in directory: String = root) async throws
        -> (status: Int32, output: String, error: String) {
        try await onOwnThread { try Self.runWaiting(command, environment: environment, in: directory) }
    }

    private static func runWaiting(_ command: [String], environment: [String: String], in directory: String) throws
        -> (status: Int32, output: String, error: String) {
        let scratch = TemporaryDirectory("ferry-install-hints-run")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        process.environment = environment
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        _ = FileManager.default.createFile(atPath: scratch.child("out"), contents: nil)
        _ = FileManager.default.createFile(atPath: scratch.child("err"), contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.child("out")))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.child("err")))
        try process.run()
        process.waitUntilExit()
        let output = (try? String(contentsOfFile: scratch.child("out"), encoding: .utf8)) ?? ""
        let error = (try? String(contentsOfFile: scratch.child("err"), encoding: .utf8)) ?? ""
        return (process.terminationStatus, output, error)
    }

    @Test("a BINDIR not on PATH is warned about, with the line to add; on PATH, nothing is said")
    func binDirNotOnPathIsWarned() async throws {
        let home = TemporaryDirectory("ferry-install-home")
        let bindir = home.child(".local/bin")
        let loader = home.child("bash_completion")
        _ = FileManager.default.createFile(atPath: loader, contents: Data())
        let hints = ["bash", Self.root + "/scripts/install-hints.sh", bindir, home.child(".local/share")]

        let off = try await run(hints, environment: ["PATH": "/usr/bin:/bin", "FERRY_BASH_COMPLETION_LOADER": loader])
        #expect(off.status == 0)
        #expect(off.error.contains("\(bindir) is not on your PATH") && off.error.contains("man ferry"), "\(off.error)")
        #expect(off.error.contains("export PATH=\"\(bindir):$PATH\""), "\(off.error)")
        #expect(!off.error.contains("bash-completion"), "\(off.error)")

        let on = try await run(hints, environment: ["PATH": "/usr/bin:\(bindir):/bin", "FERRY_BASH_COMPLETION_LOADER": loader])
        #expect(on.status == 0 && on.error.isEmpty, "\(on.error)")
    }

    @Test("bash completion without the bash-completion package is warned about")
    func bashCompletionWithoutItsPackageIsWarned() async throws {
        let home = TemporaryDirectory("ferry-install-home")
        let bindir = home.child(".local/bin")
        let result = try await run(["bash", Self.root + "/scripts/install-hints.sh", bindir, home.child(".local/share")],
                             environment: ["PATH": "/usr/bin:\(bindir):/bin",
                                           "FERRY_BASH_COMPLETION_LOADER": home.child("no-such-loader")])
        #expect(result.error.contains("bash-completion package") && result.error.contains("apt-get install bash-completion"),
                "\(result.error)")
    }

    @Test("make install runs the hints (but not when packaging with DESTDIR) and installs bash-completion first")
    func makeInstallRunsTheHints() async throws {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let dryRun = try await run(["make", "-n", "install", "PREFIX=/tmp/ferry-prefix"], environment: ["PATH": path, "HOME": "/tmp"])
        #expect(dryRun.status == 0, "\(dryRun.error)")
        #expect(dryRun.output.contains("bash scripts/install-hints.sh \"/tmp/ferry-prefix/bin\""), "\(dryRun.output)")
        #expect(dryRun.output.contains("bash scripts/bootstrap.sh install"), "\(dryRun.output)")
        let packaging = try await run(["make", "-n", "install", "DESTDIR=/tmp/ferry-package"], environment: ["PATH": path, "HOME": "/tmp"])
        #expect(!packaging.output.contains("install-hints.sh"), "\(packaging.output)")

        // The install profile asks apt-get for bash-completion (fake dpkg-query: nothing is installed).
        let fakes = TemporaryDirectory("ferry-fake-apt")
        let log = fakes.child("apt-get.log")
        try "#!/bin/sh\nexit 1\n".write(toFile: fakes.child("dpkg-query"), atomically: true, encoding: .utf8)
        try "#!/bin/sh\necho \"$@\" >> \(log)\n".write(toFile: fakes.child("apt-get"), atomically: true, encoding: .utf8)
        try "#!/bin/sh\necho 0\n".write(toFile: fakes.child("id"), atomically: true, encoding: .utf8)
        for tool in ["dpkg-query", "apt-get", "id"] {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: fakes.child(tool))
        }
        let bootstrap = try await run(["bash", Self.root + "/scripts/bootstrap.sh", "install"],
                                environment: ["PATH": fakes.path + ":/usr/bin:/bin"])
        #expect(bootstrap.status == 0, "\(bootstrap.error)")
        let asked = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(asked.contains("install") && asked.contains("bash-completion"), "apt-get was asked: \(asked)")
    }

    @Test("s3:// is named wherever the remotes a user can give are listed")
    func s3IsNamedWithTheOtherURLs() async throws {
        for command in ["push", "pull", "sync"] {
            let help = try await FerryProcess.run([command, "--help"], in: Self.root)
            #expect(help.standardOutput.contains("s3://"), "ferry \(command) --help: \(help.standardOutput)")
        }
        let page = try String(contentsOfFile: Self.root + "/contrib/ferry.1", encoding: .utf8)
        let remoteLine = page.components(separatedBy: "REMOTE is a configured remote").dropFirst().first?.prefix(200) ?? ""
        #expect(remoteLine.contains("s3://"), "contrib/ferry.1: \(remoteLine)")
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        let readmeLine = readme.components(separatedBy: "REMOTE is a\nconfigured remote").dropFirst().first?.prefix(200) ?? ""
        #expect(readmeLine.contains("s3://"), "README.md: \(readmeLine)")
    }
}
