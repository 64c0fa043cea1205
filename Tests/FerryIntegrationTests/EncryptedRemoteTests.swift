import FerryTestSupport
import Foundation
import Testing

/// `encryption:` end to end through the ferry binary, on the local backend and on nginx's
/// WebDAV: the remote holds neither plaintext nor plain names, a no-op push sends nothing,
/// a pull into a fresh state restores the tree, a wrong key exits 2 having written
/// nothing, an altered file fails with "authentication failed", and the independent
/// decoder (Tests/encryption/decode.py) reads what Ferry wrote.
@Suite("encrypted remotes through the ferry binary", .integration)
struct EncryptedRemoteTests {
    enum Place: String, CustomStringConvertible {
        case local, nginx, apache
        var description: String { rawValue }
        /// nginx hides names that start with '.', keeps its own times and has no ETags.
        static let reading: [Place] = [.local, .nginx]
        /// Where an upload can be continued: Apache honours ranged `PUT`, nginx refuses it.
        static let continuing: [Place] = [.local, .apache]
    }

    @Test("push, no-op push, independent decoder, pull into a fresh state, wrong key, altered file", arguments: Place.reading)
    func encryptedRemote(_ place: Place) async throws {
        let work = Workspace()
        let large = 3 * ContentSize.mebibyte + 12_345
        let written = try await TreeGenerator.generate(at: work.source, .init(fileCount: 40, largeFileSizes: [large], seed: 17))
        let server: TestServer? = place == .nginx ? try await TestServer(.nginx) : nil
        let stored: String
        let location: String
        if let server {
            stored = server.directory + "/root/vault"
            location = "type: webdav\n    url: \(server.url("/dav/vault"))"
        } else {
            stored = work.directory.child("remote")
            location = "type: local\n    path: remote"
        }
        let keygen = try await work.ferry(["keygen", "vault.key"])
        #expect(keygen.status == 0, "\(keygen.diagnostics)")
        #expect(try await work.ferry(["keygen", "other.key"]).status == 0)
        #expect(try await work.ferry(["keygen", "vault.key"]).status == 2, "keygen overwrote a key")
        let config = """
            remotes:
              vault:
                \(location)
                encryption:
                  key_file: vault.key
              stranger:
                \(location)
                encryption:
                  key_file: other.key
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))

        let first = try await work.ferry(["push", work.source, "--to", "vault", "--state", work.state, "--json"])
        #expect(first.status == 0, "\(first.diagnostics)")
        #expect(first.int("uploaded") == written.count)

        // Neither names nor contents in the clear.
        let storedFiles = try TreeComparison.files(in: stored)
        #expect(storedFiles.count >= written.count + 1)
        let plainNames = Set(written.flatMap { $0.split(separator: "/").map(String.init) })
        for path in storedFiles.keys {
            for component in path.split(separator: "/").map(String.init) where component != ".ferry-encryption" {
                #expect(!plainNames.contains(component), "plain name on the remote: \(path)")
                #expect(component.allSatisfy { $0.isLowercase || ("2"..."7").contains($0) }, "\(path)")
            }
        }
        // Megabytes searched on a thread of its own, not on the cooperative pool.
        let source = work.source
        let storedPaths = Array(storedFiles.keys)
        let inTheClear = try await onOwnThread { () throws -> [String] in
            let storedBytes = try storedPaths.map { try Data(contentsOf: URL(fileURLWithPath: stored + "/" + $0)) }
            return try written.filter { path in
                let content = try Data(contentsOf: URL(fileURLWithPath: source + "/" + path))
                guard content.count >= 64 else { return false }
                let sample = content.subdata(in: (content.count / 2 - 32)..<(content.count / 2))
                return storedBytes.contains { $0.range(of: sample) != nil }
            }
        }
        #expect(inTheClear.isEmpty, "plaintext on the remote: \(inTheClear)")

        let second = try await work.ferry(["push", work.source, "--to", "vault", "--state", work.state, "--json"])
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(second.int("uploaded") == 0)

        // The independent decoder reads the largest stored file: the large source file.
        let largest = try #require(storedFiles.max { $0.value.size < $1.value.size })
        let decoded = try await Self.decoder([work.directory.child("vault.key"), stored + "/" + largest.key, largest.key])
        #expect(decoded.status == 0, "\(decoded.error)")
        let largePath = try #require(written.last)
        #expect(decoded.output == (try Data(contentsOf: URL(fileURLWithPath: work.source + "/" + largePath))))
        let name = try await Self.decoder(["--name", work.directory.child("vault.key"), String(largest.key.split(separator: "/").last ?? "")])
        #expect(String(decoding: name.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                == String(largePath.split(separator: "/").last ?? ""))

        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", "vault", "--state", work.directory.child("fresh"), "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == written.count)
        // nginx keeps its own modification times, for encrypted and plaintext files alike.
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: place == .local) == [])

        // A wrong key: exit 2, one line, nothing written on either side.
        let before = try TreeComparison.files(in: stored)
        let elsewhere = work.directory.child("elsewhere")
        let wrongPull = try await work.ferry(["pull", elsewhere, "--from", "stranger", "--state", work.directory.child("s2")])
        #expect(wrongPull.status == 2, "\(wrongPull.diagnostics)")
        #expect(wrongPull.standardError.contains("wrong key or passphrase"), "\(wrongPull.diagnostics)")
        #expect(try TreeComparison.files(in: elsewhere).isEmpty)
        let wrongPush = try await work.ferry(["push", work.source, "--to", "stranger", "--state", work.directory.child("s3")])
        #expect(wrongPush.status == 2, "\(wrongPush.diagnostics)")
        #expect(try TreeComparison.files(in: stored) == before)

        // An altered file fails alone, with nothing under its name.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: stored + "/" + largest.key))
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: stored + "/" + largest.key))
        let again = work.directory.child("again")
        let tampered = try await work.ferry(["pull", again, "--from", "vault", "--state", work.directory.child("s4"), "--json"])
        #expect(tampered.status == 1, "\(tampered.diagnostics)")
        #expect((tampered.standardOutput + tampered.standardError).contains("authentication failed"), "\(tampered.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: again + "/" + largePath))
        #expect(try TreeComparison.files(in: again).keys.filter { !$0.hasSuffix(".ferry-part") }.count == written.count - 1)
        #expect(try work.temporaryFiles(in: again) == [], "a download that failed for good leaves no partial file")
    }

    /// `cipher:` picks the AEAD of new files; whatever a remote holds is read with the one
    /// each file's header names, so a remote written under either setting pulls under the other.
    @Test("each cipher setting writes its version, the decoder reads both, and a pull reads either")
    func cipherSettings() async throws {
        let work = Workspace()
        let written = try await TreeGenerator.generate(at: work.source, .init(fileCount: 12, largeFileSizes: [2 * ContentSize.mebibyte + 7], seed: 29))
        #expect(try await work.ferry(["keygen", "vault.key"]).status == 0)
        var config = "remotes:\n"
        for (name, cipher) in [("chacha", "chacha20-poly1305"), ("aes", "aes-256-gcm")] {
            for (remote, setting) in [(name, cipher), (name + "-other", cipher == "aes-256-gcm" ? "chacha20-poly1305" : "aes-256-gcm")] {
                config += "  \(remote):\n    type: local\n    path: \(name)\n    encryption:\n      key_file: vault.key\n      cipher: \(setting)\n"
            }
        }
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))

        for (name, version) in [("chacha", UInt8(3)), ("aes", UInt8(4))] {
            let push = try await work.ferry(["push", work.source, "--to", name, "--state", work.directory.child("state-" + name)])
            #expect(push.status == 0, "\(push.diagnostics)")
            let stored = work.directory.child(name)
            let files = try TreeComparison.files(in: stored).filter { !$0.key.hasSuffix(".ferry-encryption") }
            #expect(files.count >= written.count)
            for path in files.keys {
                let header = try Data(contentsOf: URL(fileURLWithPath: stored + "/" + path)).prefix(9)
                #expect(header.last == version, "\(name): \(path) has version \(header.last ?? 0)")
            }
            let largest = try #require(files.max { $0.value.size < $1.value.size })
            let decoded = try await Self.decoder([work.directory.child("vault.key"), stored + "/" + largest.key, largest.key])
            #expect(decoded.status == 0, "\(decoded.error)")
            #expect(decoded.output == (try Data(contentsOf: URL(fileURLWithPath: work.source + "/" + (written.last ?? "")))))

            let restored = work.directory.child("restored-" + name)
            let pull = try await work.ferry(["pull", restored, "--from", name + "-other", "--state", work.directory.child("fresh-" + name)])
            #expect(pull.status == 0, "\(pull.diagnostics)")
            #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: true) == [])
        }

        try Data("remotes:\n  vault:\n    type: local\n    path: r\n    encryption:\n      key_file: vault.key\n      cipher: aes-128\n".utf8)
            .write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let refused = try await work.ferry(["push", work.source, "--to", "vault", "--state", work.state])
        #expect(refused.status == 2, "\(refused.diagnostics)")
        #expect(refused.standardError.contains("unknown cipher 'aes-128'"), "\(refused.diagnostics)")
    }

    @Test("an encrypted pull killed half-way continues at a segment, not from the start", arguments: Place.reading)
    func killedPullContinues(_ place: Place) async throws {
        let work = Workspace()
        let size = 24 * ContentSize.mebibyte
        try TreeGenerator.write(at: work.source + "/VID_0001.mp4", size: size, seed: 41, modified: 1_700_000_000.25)
        let vault = try await Self.vault(at: place, in: work)
        let push = try await work.ferry(["push", work.source, "--to", "vault", "--state", work.state])
        #expect(push.status == 0, "\(push.diagnostics)")

        // Slowed down, so the kill lands after the first window is written and long before the last.
        let restored = work.directory.child("restored")
        let state = work.directory.child("fresh")
        let partial = restored + "/.VID_0001.mp4.ferry-part"
        let running = try FerryProcess(["pull", restored, "--from", "vault", "--state", state, "--json", "--bwlimit", "2M"],
                                       in: work.directory.path)
        await when({
            let written = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? NSNumber)?.intValue ?? 0
            return written >= 4 * ContentSize.mebibyte
        }, do: { running.killHard() })
        _ = await running.wait()
        #expect(!FileManager.default.fileExists(atPath: restored + "/VID_0001.mp4"))

        let resumed = try await work.ferry(["pull", restored, "--from", "vault", "--state", state, "--json"])
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        let event = try #require(resumed.events(named: "transferred").first, "\(resumed.diagnostics)")
        let resumedFrom = (event["resumed_from"] as? NSNumber)?.intValue ?? 0
        let received = (event["bytes"] as? NSNumber)?.intValue ?? 0
        #expect(resumedFrom >= 4 * ContentSize.mebibyte && resumedFrom < size, "resumed from \(resumedFrom)")
        #expect(resumedFrom % 65_536 == 0, "a download continues at a segment")
        #expect(resumedFrom + received == size)
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: place == .local) == [])
        #expect(try work.temporaryFiles(in: restored).isEmpty)
        withExtendedLifetime(vault.server) {}
    }

    @Test("an encrypted push killed half-way continues with the same header, not from the start", arguments: Place.continuing)
    func killedPushContinues(_ place: Place) async throws {
        let work = Workspace()
        let size = 24 * ContentSize.mebibyte
        try TreeGenerator.write(at: work.source + "/VID_0001.mp4", size: size, seed: 43, modified: 1_700_000_000.75)
        let vault = try await Self.vault(at: place, in: work, webDAVOptions: "\n    upload_chunk_size: 4M")
        let stored = vault.stored

        let running = try FerryProcess(["push", work.source, "--to", "vault", "--state", work.state, "--json", "--bwlimit", "2M"],
                                       in: work.directory.path)
        // Two chunks of 4 MiB kept by the server (or 9 MiB on the local disk), and more to come.
        await when({
            let partial = try? TreeComparison.files(in: stored).first { $0.key.hasSuffix(".ferry-part") }
            return (partial?.value.size ?? 0) > 9 * Int64(ContentSize.mebibyte)
        }, do: { running.killHard() })
        _ = await running.wait()

        let resumed = try await work.ferry(["push", work.source, "--to", "vault", "--state", work.state, "--json"])
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        let event = try #require(resumed.events(named: "transferred").first, "\(resumed.diagnostics)")
        let resumedFrom = (event["resumed_from"] as? NSNumber)?.intValue ?? 0
        let sent = (event["bytes"] as? NSNumber)?.intValue ?? 0
        #expect(resumedFrom >= 7 * ContentSize.mebibyte && resumedFrom < size, "resumed from \(resumedFrom)")
        #expect(resumedFrom + sent == size)

        // What was kept and what was added decrypt as one file, with the plaintext's bytes.
        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", "vault", "--state", work.directory.child("fresh"), "--json"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(try TreeComparison.differences(work.source, restored, compareModificationTimes: place == .local) == [])
        withExtendedLifetime(vault.server) {}
    }

    @Test("an encrypted multipart upload to S3 killed half-way continues the upload its journal recorded")
    func killedS3UploadContinues() async throws {
        let server = try await S3TestServer(.moto)
        let work = Workspace()
        // The proxy holds the third part: the kill lands while it is on its way, with
        // exactly two parts stored, however fast or slow the machine is.
        let gate = work.directory.child("gate")
        let proxy = try await FaultProxy.holdingPartUpload(after: 2, upstream: server.endpoint, gate: gate)
        let size = 9 * (5 << 20) + (1 << 20)
        try TreeGenerator.write(at: work.source + "/VID_0001.mov", size: size, seed: 92, modified: 1_700_000_000.25)
        #expect(try await work.ferry(["keygen", "vault.key"]).status == 0)
        let config = """
            remotes:
              vault:
                type: s3
                bucket: \(S3TestServer.bucket)
                prefix: crash
                endpoint: \(proxy.origin)
                multipart_threshold: 5M
                multipart_part_size: 5M
                multipart_concurrency: 1
                encryption:
                  key_file: vault.key
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let running = try FerryProcess(["push", work.source, "--to", "vault", "--state", work.state, "--json"],
                                       in: work.directory.path, environment: server.environment)
        await when({ FileManager.default.fileExists(atPath: gate + "/held") }, do: { running.killHard() })
        _ = await running.wait()
        // The stored key is the encrypted name: found among the store's unfinished uploads.
        let key = try #require(server.unfinishedUploads(prefix: "crash/").first)
        let heldAtKill = server.partsHeld(key: key).count
        #expect(heldAtKill == 2, "held \(heldAtKill) parts")

        // moto dates every upload 2010: the push first aborts abandoned uploads, and must
        // keep the one its journal continues, under its stored name.
        let resumed = try await FerryProcess.run(["push", work.source, "--to", "vault", "--state", work.state, "--json"],
                                                 in: work.directory.path, environment: server.environment)
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        let event = try #require(resumed.events(named: "transferred").first)
        let resumedFrom = (event["resumed_from"] as? NSNumber)?.intValue ?? 0
        let sent = (event["bytes"] as? NSNumber)?.intValue ?? 0
        // The parts hold ciphertext: in plaintext, a few tags' worth less than the parts.
        #expect(resumedFrom > heldAtKill * (5 << 20) - 65_536 && resumedFrom <= heldAtKill * (5 << 20),
                "resumed from \(resumedFrom) with \(heldAtKill) parts held")
        #expect(resumedFrom + sent == size)
        #expect(server.unfinishedUploads(prefix: "crash/").isEmpty)

        let restored = work.directory.child("restored")
        let pull = try await FerryProcess.run(["pull", restored, "--from", "vault", "--state", work.directory.child("fresh"), "--json"],
                                              in: work.directory.path, environment: server.environment)
        #expect(pull.status == 0, "\(pull.diagnostics)")
        let differences = try TreeComparison.differences(work.source, restored)
        #expect(differences.isEmpty, "\(differences) \(pull.diagnostics)")
    }
}

extension EncryptedRemoteTests {
    @Test("two stored files swapped on the remote: a pull refuses both, one line each naming it, nothing under their names")
    func swappedFilesAreRefused() async throws {
        let work = Workspace()
        let (server, stored) = try await Self.vault(at: .local, in: work)
        // Two photos of one size (a listing shows nothing amiss), and one left alone.
        for (index, name) in ["a.jpg", "b.jpg", "c.jpg"].enumerated() {
            try TreeGenerator.write(at: work.source + "/2024/" + name, size: 150_000, seed: UInt64(index + 1))
        }
        let push = try await work.ferry(["push", work.source, "--to", "vault", "--state", work.state, "--json"])
        #expect(push.status == 0 && push.int("uploaded") == 3, "\(push.diagnostics)")
        let names = try ["a.jpg", "b.jpg"].map { name in
            try #require(push.events(named: "transferred").first { $0["path"] as? String == "2024/" + name })
        }
        #expect(names.count == 2)
        // The stored names, found by decoding them with the independent decoder.
        var storedPath: [String: String] = [:]
        for path in try TreeComparison.files(in: stored).keys where !path.hasSuffix(".ferry-encryption") {
            let last = String(path.split(separator: "/").last ?? "")
            let name = try await Self.decoder(["--name", work.directory.child("vault.key"), last])
            storedPath[String(decoding: name.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)] = path
        }
        let a = stored + "/" + (try #require(storedPath["a.jpg"])), b = stored + "/" + (try #require(storedPath["b.jpg"]))
        try FileManager.default.moveItem(atPath: a, toPath: a + ".swap")
        try FileManager.default.moveItem(atPath: b, toPath: a)
        try FileManager.default.moveItem(atPath: a + ".swap", toPath: b)

        let restored = work.directory.child("restored")
        let pull = try await work.ferry(["pull", restored, "--from", "vault", "--state", work.directory.child("fresh"), "--json"])
        #expect(pull.status != 0, "\(pull.diagnostics)")
        #expect(pull.int("downloaded") == 1 && pull.int("failed") == 2, "\(pull.diagnostics)")
        let failed = pull.events(named: "failed")
        #expect(Set(failed.compactMap { $0["path"] as? String }) == ["2024/a.jpg", "2024/b.jpg"])
        for event in failed {
            let error = event["error"] as? String ?? ""
            #expect(error.contains("authentication failed") && error.contains("moved here from another name")
                    && error.contains(event["path"] as? String ?? "?") && !error.contains("\n"), "\(error)")
        }
        #expect(try TreeComparison.files(in: restored).keys.sorted() == ["2024/c.jpg"])
        withExtendedLifetime(server) {}
    }

    /// A remote `vault` at `place` with `encryption:` and a new key, in `work`'s config.yml.
    /// `server` is kept by the caller for as long as the server must run.
    static func vault(at place: Place, in work: Workspace,
                      webDAVOptions: String = "") async throws -> (server: TestServer?, stored: String) {
        let server: TestServer? = switch place {
        case .local: nil
        case .nginx: try await TestServer(.nginx)
        case .apache: try await TestServer(.apache)
        }
        let location = server.map { "type: webdav\n    url: \($0.url("/dav/vault"))" + webDAVOptions } ?? "type: local\n    path: remote"
        #expect(try await work.ferry(["keygen", "vault.key"]).status == 0)
        try Data("remotes:\n  vault:\n    \(location)\n    encryption:\n      key_file: vault.key\n".utf8)
            .write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        return (server, server.map { $0.directory + "/root/vault" } ?? work.directory.child("remote"))
    }

    /// Runs Tests/encryption/decode.py (Python's `cryptography` package), waited for on a
    /// thread of its own, never on the cooperative pool.
    static func decoder(_ arguments: [String]) async throws -> (status: Int32, output: Data, error: String) {
        try await onOwnThread { try decoderWaiting(arguments) }
    }

    private static func decoderWaiting(_ arguments: [String]) throws -> (status: Int32, output: Data, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", TestServer.repositoryRoot + "/Tests/encryption/decode.py"] + arguments
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, data, errorText)
    }
}

private enum ContentSize {
    static let mebibyte = 1 << 20
}
