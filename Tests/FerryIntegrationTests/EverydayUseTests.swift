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

        let json = try await work.ferry(["push", "small", "--to", "elsewhere", "--json", "--state", work.state])
        #expect(json.summary?["local"] as? String == "small" && json.summary?["remote"] as? String == "elsewhere",
                "\(json.diagnostics)")

        let dryRun = try await work.ferry(["pull", "./pulled", "--from", "elsewhere", "--dry-run", "--state", work.state])
        #expect(dryRun.standardOutput.contains("pull ./pulled ← elsewhere: dry run"), "\(dryRun.diagnostics)")
    }

    @Test("ferry watch's run summaries say where the files went too")
    func watchSummarySaysWhere() async throws {
        let work = Workspace()
        try smallFolder(work)
        try config(work, """
            remotes:
              nas:
                type: local
                path: ./backup
            folders:
              media:
                path: ./small
                remote: nas
                remote_path: media
            """)
        // Info logs: a run that never comes (seen once in a loaded fresh-clone run) shows
        // how far the watch got.
        let watch = try FerryProcess(["watch", "--state", work.state, "--log-level", "info"], in: work.directory.path)
        defer { watch.stopIfRunning() }
        let logged = await when({ watch.errorSoFar.contains("1 uploaded") })
        #expect(logged)
        watch.stopIfRunning()
        let result = await watch.wait()
        #expect(result.standardError.contains("media: push → nas:media: 1 uploaded"), "\(result.diagnostics)")
    }

    @Test("messages name the remote as the person wrote it (nas:phone), not by the engine's webdav:http://…#phone")
    func messagesNameTheRemoteAsWritten() async throws {
        let server = try await TestServer(.nginx)
        let work = Workspace()
        try FileManager.default.createDirectory(atPath: work.directory.child("phone"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: work.directory.child("phone/a.jpg")))
        try config(work, """
            remotes:
              nas:
                type: webdav
                url: \(server.url("/dav"))
            folders:
              photos:
                path: ./phone
                remote: nas
                remote_path: phone
            retry:
              offline_wait: 2s
            """)
        let first = try await work.ferry(["push", "--state", work.state])
        #expect(first.status == 0, "\(first.diagnostics)")
        try await onOwnThread { try server.stop() }
        try Data("y".utf8).write(to: URL(fileURLWithPath: work.directory.child("phone/b.jpg")))
        let offline = try await work.ferry(["push", "--state", work.state])
        #expect(offline.status == 1, "\(offline.diagnostics)")
        #expect(offline.standardError.contains("remote nas:phone is offline"), "\(offline.diagnostics)")
        #expect(!offline.standardError.contains("webdav:http"), "\(offline.diagnostics)")

        // A run that cannot list at all says so by the same name.
        let elsewhere = Workspace()
        try FileManager.default.createDirectory(atPath: elsewhere.directory.child("phone"), withIntermediateDirectories: true)
        try config(elsewhere, """
            remotes:
              nas:
                type: webdav
                url: \(server.url("/dav"))
            folders:
              photos:
                path: ./phone
                remote: nas
                remote_path: phone
            """)
        let refused = try await elsewhere.ferry(["push", "--state", elsewhere.state])
        #expect(refused.standardError.contains("cannot list nas:phone:") && !refused.standardError.contains("webdav:http"),
                "\(refused.diagnostics)")
    }

    @Test("the daemon's \"since\" is when it started, kept across a reload (SIGHUP)")
    func daemonSinceSurvivesAReload() async throws {
        let work = Workspace()
        try smallFolder(work)
        let folders = "remotes:\n  nas:\n    type: local\n    path: ./backup\nfolders:\n  media:\n    path: ./small\n    remote: nas\n"
        try config(work, folders)
        let statusFile = work.state + "/daemon-status.json"
        @Sendable func startedAt() -> String? {
            guard let data = FileManager.default.contents(atPath: statusFile),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
            return object["started_at"] as? String
        }
        let daemon = try FerryProcess(["daemon", "--state", work.state, "--log-level", "info"], in: work.directory.path)
        defer { daemon.stopIfRunning() }
        #expect(await when({ startedAt() != nil }))
        let before = startedAt()
        // The file keeps whole seconds: the reload comes in a later second than the start.
        let startSecond = Int(Date().timeIntervalSince1970)
        await when({ Int(Date().timeIntervalSince1970) > startSecond })
        // A second folder, so that the status the reloaded daemon writes can be told apart.
        try FileManager.default.createDirectory(atPath: work.directory.child("vids"), withIntermediateDirectories: true)
        try config(work, folders + "  videos:\n    path: ./vids\n    remote: nas\n    remote_path: videos\n")
        daemon.send(SIGHUP)
        #expect(await when({ daemon.errorSoFar.contains("config reloaded") }))
        #expect(await when({ ((try? String(contentsOfFile: statusFile, encoding: .utf8)) ?? "").contains("\"videos\"") }))
        #expect(startedAt() == before, "the daemon's start moved with the reload: \(String(describing: before)) → \(String(describing: startedAt()))")
        daemon.send(SIGTERM)
        _ = await daemon.wait()
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
            #expect(!result.standardError.contains("webdav:http"), "named as typed: \(command): \(result.diagnostics)")
        }
    }

    // MARK: verify on Apache

    /// The ETag Apache answers for `url` now (`W/"…"` within a second of the file's last
    /// write, `"…"` after). Blocking: for a condition polled on its own thread (`when`).
    private static func etag(_ url: String) throws -> String? {
        try curlWaiting(["-I", url]).split(separator: "\r\n")
            .first { $0.lowercased().hasPrefix("etag:") }
            .map { $0.dropFirst("etag:".count).trimmingCharacters(in: .whitespaces) }
    }

    /// curl's output (headers included with -I), waited for on a thread of its own, never
    /// on the cooperative pool.
    @discardableResult
    private func curl(_ arguments: [String]) async throws -> String {
        try await onOwnThread { try Self.curlWaiting(arguments) }
    }

    private static func curlWaiting(_ arguments: [String]) throws -> String {
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-sS", "--fail"] + arguments
        let pipe = Pipe()
        curl.standardOutput = pipe
        try curl.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        curl.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test("verify after a sync with Apache: a weak ETag recorded in the write's first second matches the strong one after")
    func verifyIgnoresApachesWeakETagMarker() async throws {
        let server = try await TestServer(.apache)
        let work = Workspace()
        try FileManager.default.createDirectory(atPath: work.source, withIntermediateDirectories: true)
        // Files new on the server (written by another client) and fetched at once: the
        // download's answer carries the weak ETag, the listings after it the strong one.
        // (Before commit 23a0248 this failed with `remoteDiffers … ETag W/"4-…", remote
        // … ETag "4-…"`; on a machine so loaded that the download comes a second after
        // the write, no weak ETag is seen and the test checks less, never wrongly.)
        try await curl(["-X", "MKCOL", server.url("/dav/v/")])
        let sample = work.directory.child("sample")
        try Data("file".utf8).write(to: URL(fileURLWithPath: sample))
        for index in 1...3 { try await curl(["-T", sample, server.url("/dav/v/f\(index).jpg")]) }
        let remote = server.url("/dav/v").replacingOccurrences(of: "http://", with: "dav://")
        let sync = try await work.ferry(["sync", work.source, "--to", remote, "--state", work.state])
        #expect(sync.status == 0 && sync.standardOutput.contains("3 downloaded"), "\(sync.diagnostics)")
        // Whatever the ETags' form right after the writes, verify finds no difference; then
        // again once Apache calls every one of them strong (the second after the write).
        let early = try await work.ferry(["verify", work.source, "--to", remote, "--state", work.state])
        #expect(early.status == 0 && early.standardOutput.contains("0 differences"), "\(early.diagnostics)")
        let strong = await when({
            (1...3).allSatisfy { index in
                (try? Self.etag(server.url("/dav/v/f\(index).jpg")))?.map { !$0.hasPrefix("W/") && $0.hasPrefix("\"") } == true
            }
        })
        #expect(strong)
        let later = try await work.ferry(["verify", work.source, "--to", remote, "--state", work.state])
        #expect(later.status == 0 && later.standardOutput.contains("0 differences"), "\(later.diagnostics)")
        #expect(!later.standardOutput.contains("remoteDiffers") && !later.standardError.contains("remoteDiffers"),
                "\(later.diagnostics)")
    }

    // MARK: resolve on a pull folder

    /// A pull folder `photos` (./phone ← nas:lib) with a.jpg changed on both sides since
    /// the last pull: in conflict.
    private func pullFolderInConflict() async throws -> Workspace {
        let work = Workspace()
        let remote = work.directory.child("backup/lib")
        try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: true)
        try Data("version 1".utf8).write(to: URL(fileURLWithPath: remote + "/a.jpg"))
        try config(work, """
            remotes:
              nas:
                type: local
                path: ./backup
            folders:
              photos:
                path: ./phone
                remote: nas
                remote_path: lib
                mode: pull
            """)
        let first = try await work.ferry(["pull", "--state", work.state])
        #expect(first.status == 0, "\(first.diagnostics)")
        try Data("edited here, longer".utf8).write(to: URL(fileURLWithPath: work.directory.child("phone/a.jpg")))
        try Data("edited on the remote".utf8).write(to: URL(fileURLWithPath: remote + "/a.jpg"))
        let conflicted = try await work.ferry(["pull", "--state", work.state])
        #expect(conflicted.status == 1 && conflicted.standardError.contains("conflict: a.jpg"), "\(conflicted.diagnostics)")
        return work
    }

    private func contents(_ path: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("resolve on a pull folder: the next pull carries the answer out, and the one after finds nothing to do",
          arguments: ["remote", "both", "local"])
    func resolveOnAPullFolderIsCarriedOutByPull(keep: String) async throws {
        let work = try await pullFolderInConflict()
        let resolve = try await work.ferry(["resolve", "phone/a.jpg", "--keep", keep, "--state", work.state])
        #expect(resolve.status == 0, "\(resolve.diagnostics)")
        #expect(resolve.standardOutput.contains("the next `ferry pull photos` carries it out"), "\(resolve.diagnostics)")
        let pull = try await work.ferry(["pull", "--state", work.state])
        #expect(pull.status == 0 && !pull.standardError.contains("changed on both sides"), "\(pull.diagnostics)")
        let phone = work.directory.child("phone")
        let copies = try FileManager.default.contentsOfDirectory(atPath: phone).filter { $0.hasPrefix("a.conflict-") }
        switch keep {
        case "remote":
            #expect(contents(phone + "/a.jpg") == "edited on the remote")
            #expect(copies.isEmpty)
        case "both":
            #expect(contents(phone + "/a.jpg") == "edited on the remote")
            #expect(copies.count == 1 && copies.first.map { contents(phone + "/" + $0) } == "edited here, longer", "\(copies)")
        default:
            #expect(contents(phone + "/a.jpg") == "edited here, longer")
            #expect(contents(work.directory.child("backup/lib/a.jpg")) == "edited on the remote", "a pull never writes the remote")
        }
        let again = try await work.ferry(["pull", "--state", work.state])
        #expect(again.status == 0 && again.standardError.isEmpty, "\(again.diagnostics)")
        #expect(again.standardOutput.contains("0 downloaded"), "\(again.diagnostics)")
    }

    @Test("resolve --now on a pull folder runs a pull, not a sync")
    func resolveNowOnAPullFolderPulls() async throws {
        let work = try await pullFolderInConflict()
        let resolve = try await work.ferry(["resolve", "phone/a.jpg", "--keep", "remote", "--now", "--state", work.state])
        #expect(resolve.status == 0, "\(resolve.diagnostics)")
        #expect(resolve.standardOutput.contains("pull photos ← nas:lib: 1 downloaded"), "\(resolve.diagnostics)")
        #expect(contents(work.directory.child("phone/a.jpg")) == "edited on the remote")
    }

    // MARK: Smaller things a user notices

    @Test("a mistyped command gets the nearest one; a word near none lists them", arguments: [
        ("pul", "unknown command 'pul'; did you mean 'ferry pull'?"),
        ("stauts", "did you mean 'ferry status'?"),
        ("frobnicate", "commands: init, push, pull, sync"),
    ])
    func mistypedCommandGetsDidYouMean(typed: String, saying: String) async throws {
        let result = try await Workspace().ferry([typed, "photos"])
        #expect(result.status == 2, "\(result.diagnostics)")
        #expect(result.standardError.split(separator: "\n").count == 1 && result.standardError.hasPrefix("ferry: "),
                "\(result.diagnostics)")
        #expect(result.standardError.contains(saying), "\(result.diagnostics)")
    }

    @Test("a dry run shows no size for what moves no bytes (a deletion is not an empty file)")
    func dryRunDeletionHasNoZeroSize() async throws {
        let work = Workspace()
        try smallFolder(work)
        try Data("track".utf8).write(to: URL(fileURLWithPath: work.directory.child("small/walk.gpx")))
        let push = try await work.ferry(["push", "small", "--to", "backup", "--state", work.state])
        #expect(push.status == 0, "\(push.diagnostics)")
        try FileManager.default.removeItem(atPath: work.directory.child("small/walk.gpx"))
        let dryRun = try await work.ferry(["push", "small", "--to", "backup", "--delete", "--dry-run", "--state", work.state])
        #expect(dryRun.status == 0, "\(dryRun.diagnostics)")
        let line = dryRun.standardOutput.split(separator: "\n").first { $0.contains("walk.gpx") }.map(String.init) ?? ""
        #expect(line.hasPrefix("would delete remote walk.gpx  [") && !line.contains("0 B"), "\(dryRun.diagnostics)")
    }

    @Test("ad-hoc runs are labelled with their paths in verify and in the run history, never \"ad-hoc\"")
    func adHocRunsAreLabelledWithTheirPath() async throws {
        let work = Workspace()
        try smallFolder(work)
        let push = try await work.ferry(["push", "small", "--to", "backup", "--state", work.state])
        #expect(push.status == 0, "\(push.diagnostics)")
        let verify = try await work.ferry(["verify", "small", "--to", "backup", "--state", work.state])
        #expect(verify.standardOutput.contains("verify small – backup: 1 file, 0 differences"), "\(verify.diagnostics)")
        let history = try await work.ferry(["status", "--history", "--state", work.state])
        #expect(history.standardOutput.contains(work.directory.child("small") + " push (manual)"), "\(history.diagnostics)")
        #expect(!history.standardOutput.contains("ad-hoc"), "\(history.diagnostics)")
    }

    @Test("the run history's line of a --delete run says what it deleted")
    func historyLineShowsDeletions() async throws {
        let work = Workspace()
        try smallFolder(work)
        try Data("track".utf8).write(to: URL(fileURLWithPath: work.directory.child("small/walk.gpx")))
        let push = try await work.ferry(["push", "small", "--to", "backup", "--state", work.state])
        #expect(push.status == 0, "\(push.diagnostics)")
        try FileManager.default.removeItem(atPath: work.directory.child("small/walk.gpx"))
        let mirror = try await work.ferry(["push", "small", "--to", "backup", "--delete", "--state", work.state])
        #expect(mirror.status == 0 && mirror.standardOutput.contains("1 deleted"), "\(mirror.diagnostics)")
        let history = try await work.ferry(["status", "--history", "--limit", "1", "--state", work.state])
        #expect(history.standardOutput.contains("1 deleted on the remote"), "\(history.diagnostics)")
    }

    @Test("the README's exit-code table holds: a missing folder is 1, a usage error 2")
    func exitCodeTableHolds() async throws {
        let readme = try String(contentsOfFile: TestServer.repositoryRoot + "/README.md", encoding: .utf8)
        for code in ["| **0** |", "| **1** |", "| **2** |", "| **130** |"] {
            #expect(readme.contains(code), "README.md has no row \(code)")
        }
        let row = readme.split(separator: "\n").first { $0.hasPrefix("| **1** |") } ?? ""
        #expect(row.contains("the local folder or the remote folder does not exist"), "\(row)")
        let work = Workspace()
        let missing = try await work.ferry(["push", "./no-such-folder", "--to", "backup", "--state", work.state])
        #expect(missing.status == 1, "\(missing.diagnostics)")
        let usage = try await work.ferry(["push", "--no-such-option"])
        #expect(usage.status == 2, "\(usage.diagnostics)")
    }
}
