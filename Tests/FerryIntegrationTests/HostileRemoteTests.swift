import ArchiveCodec
import FerryTestSupport
import Foundation
import Testing

/// Remotes that lie (docs/reliability.md, "Hostile remotes"): each case reproduces what a
/// hostile server or plugin did to Ferry before it was bounded, against a hostile fake
/// server on 127.0.0.1 (`scripts/test-servers/hostile-server.py`) or hostile files on a
/// local remote.
@Suite("hostile remotes", .integration)
struct HostileRemoteTests {
    /// Few, quick retries: a hostile answer is retryable, and the default backoff would
    /// spend 15 s on it.
    static let quickRetries = "retry:\n  attempts: 2\n  base_delay: 50ms\n  max_delay: 100ms\n"

    static func workspace(config: String = quickRetries) throws -> Workspace {
        let work = Workspace()
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        return work
    }

    // MARK: Item 7: a body longer than the listing said

    @Test("a download that passes its listed size is stopped: nothing under the final name, exit 1",
          arguments: [false, true])
    func oversizeBody(announced: Bool) async throws {
        let server = try await HostileServer("oversize", ["--listed", "5", "--body", "\(64 << 20)"]
            + (announced ? ["--with-length"] : []))
        let work = try Self.workspace()
        let run = try await work.ferry(["pull", work.destination, "--from", server.davURL("/dav/"), "--state", work.state])
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(run.standardError.contains("more than the 5 bytes expected"), "\(run.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: work.destination + "/big.bin"))
        // Whatever is left to continue from is within the listed size.
        for (name, info) in try TreeComparison.files(in: work.destination) {
            #expect(info.size <= 5, "\(name) holds \(info.size) bytes")
        }
    }

    // MARK: Item 3: concurrent uploads into new folders

    @Test("300 files into many new nested folders, 8 at a time: every file arrives, one MKCOL per folder, also where a second MKCOL in flight gets 409",
          arguments: TestServer.Kind.webDAV)
    func concurrentFolderCreation(_ kind: TestServer.Kind) async throws {
        let server = try await TestServer(kind)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0, options: ["--mkcol-race", "0.05"])
        let work = try Self.workspace()
        for index in 0..<300 {
            try TreeGenerator.write(at: work.source + "/y\(index % 3)/m\(index % 12)/d\(index % 48)/f\(index).jpg",
                                    size: 200 + index, seed: UInt64(index))
        }
        let run = try await work.ferry(["push", work.source, "--to", "dav://" + proxy.origin.dropFirst("http://".count) + "/dav/new/",
                                        "--state", work.state, "--transfers", "8"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(try TreeComparison.differences(work.source, server.directory + "/root/new", compareModificationTimes: false,
                                               ignoringFolders: server.bookkeepingFolders).isEmpty)
        let mkcols = proxy.requests.filter { $0.hasPrefix("MKCOL ") }
        #expect(!mkcols.contains { $0.contains("race 409") }, "\(mkcols)")
        let folders = Dictionary(grouping: mkcols.map { String($0.split(separator: " ")[1]) }, by: { $0 })
        #expect(folders.keys.filter { $0.hasPrefix("/dav/new/y") }.count == 3 + 12 + 48, "\(mkcols)")
        for (folder, requests) in folders {
            // The first folder below a remote root that does not exist yet is asked again
            // once the root is made; every other folder once.
            let firstLevel = folder.dropFirst("/dav/new/".count).dropLast().contains("/") == false
            #expect(requests.count == 1 || (requests.count == 2 && firstLevel), "\(folder): \(requests.count) MKCOLs")
        }
    }

    // MARK: Item 9: trees without end

    @Test("a remote tree deeper than limits.remote_depth stops the listing with an error naming it; nothing is downloaded")
    func endlessDepth() async throws {
        let server = try await HostileServer("deep", ["--levels", "100"])
        let work = try Self.workspace(config: Self.quickRetries + "limits:\n  remote_depth: 20\n")
        let run = try await work.ferry(["pull", work.destination, "--from", server.davURL("/dav/"), "--state", work.state])
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(run.standardError.contains("deeper than 20 levels") && run.standardError.contains("limits.remote_depth"),
                "\(run.diagnostics)")
        #expect(try TreeComparison.files(in: work.destination).isEmpty)
        // The walk stopped at the bound: a PROPFIND per level (and one that the remote folder
        // exists, one for the bundles' folder), not per level of the tree.
        #expect(server.requests.filter { $0.hasPrefix("PROPFIND") }.count <= 24, "\(server.requests.count) requests")
    }

    @Test("a remote tree wider than limits.remote_entries stops the listing with an error naming it")
    func endlessWidth() async throws {
        let server = try await HostileServer("wide", ["--fanout", "30", "--levels", "2"])
        let work = try Self.workspace(config: Self.quickRetries + "limits:\n  remote_entries: 2000\n")
        let run = try await work.ferry(["pull", work.destination, "--from", server.davURL("/dav/"), "--state", work.state])
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(run.standardError.contains("more than 2000 files and folders") && run.standardError.contains("limits.remote_entries"),
                "\(run.diagnostics)")
        #expect(try TreeComparison.files(in: work.destination).isEmpty)
        // The walk stopped at the bound: depth first, 2,000 entries are 64 listings of 60
        // (a folder with subfolders) or 30 (one without), of the 931 folders there are, with
        // the stat of the remote folder and the bundles' folder.
        #expect(server.requests.filter { $0.hasPrefix("PROPFIND") }.count <= 70, "\(server.requests.count) requests")
    }

    // MARK: Item 12: names that rewrite the screen

    @Test("control characters and bidi overrides in remote names are printed escaped; JSON keeps the name")
    func escapedNames() async throws {
        let server = try await TestServer(.nginx)
        let names = ["invoice\u{202E}fdp.exe", "next\u{0085}line.jpg", "plain.jpg", "two\u{2028}lines.jpg",
                     "zero\u{200B}width.jpg", "\u{FEFF}bom.jpg", "family\u{1F468}\u{200D}\u{1F469}.jpg"]
        try FileManager.default.createDirectory(atPath: server.directory + "/root/names", withIntermediateDirectories: true)
        for name in names {
            try Data("abc".utf8).write(to: URL(fileURLWithPath: server.directory + "/root/names/" + name))
        }
        let work = try Self.workspace()
        let remote = "dav://" + server.origin.dropFirst("http://".count) + "/dav/names/"
        let list = try await work.ferry(["ls", remote])
        #expect(list.status == 0, "\(list.diagnostics)")
        #expect(list.standardOutput.contains("invoice\\u202efdp.exe") && list.standardOutput.contains("next\\u0085line.jpg"),
                "\(list.diagnostics)")
        #expect(list.standardOutput.contains("two\\u2028lines.jpg") && list.standardOutput.contains("zero\\u200bwidth.jpg")
                && list.standardOutput.contains("\\ufeffbom.jpg"), "\(list.diagnostics)")
        #expect(list.standardOutput.contains("family\u{1F468}\u{200D}\u{1F469}.jpg"), "an emoji's joiner is printed as it is")
        // The files were put on nginx by the test, not by Ferry: no catalog of hidden names.
        let pull = try await work.ferry(["pull", work.destination, "--from", remote, "--state", work.state, "-v",
                                         "--ignore-hidden-names"])
        #expect(pull.status == 0, "\(pull.diagnostics)")
        #expect(pull.standardOutput.contains("downloaded invoice\\u202efdp.exe"), "\(pull.diagnostics)")
        for output in [list.standardOutput, list.standardError, pull.standardOutput, pull.standardError] {
            #expect(!output.unicodeScalars.contains { [0x202E, 0x85, 0x2028, 0x200B, 0xFEFF].contains($0.value) }, "raw: \(output)")
        }
        // The files themselves keep their names; JSON carries them exactly.
        #expect(Set(try TreeComparison.files(in: work.destination).keys) == Set(names))
        let json = try await work.ferry(["ls", remote, "--json"])
        let listed = json.standardOutput.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }.compactMap { $0["path"] as? String }
        #expect(Set(listed) == Set(names), "\(json.diagnostics)")
    }

    // MARK: Item 12: one name in two Unicode forms

    static let nfc = "caf\u{E9}.jpg"
    static let nfd = "cafe\u{301}.jpg"

    @Test("two local files whose names differ only by Unicode normalization both fail; nothing of them is sent or deleted")
    func localNormalizationClash() async throws {
        let work = try Self.workspace()
        try TreeGenerator.write(at: work.source + "/" + Self.nfc, size: 100, seed: 1)
        try TreeGenerator.write(at: work.source + "/ok.jpg", size: 100, seed: 3)
        let first = try await work.push()
        #expect(first.status == 0, "\(first.diagnostics)")
        // The NFD twin appears; the NFC file was sent already.
        try TreeGenerator.write(at: work.source + "/" + Self.nfd, size: 200, seed: 2)
        let run = try await work.push(["--delete"])
        #expect(run.status == 1, "\(run.diagnostics)")
        let failed = run.events(named: "failed")
        #expect(failed.count == 2, "\(run.diagnostics)")
        #expect(failed.allSatisfy { ($0["error"] as? String ?? "").contains("different Unicode forms") }, "\(run.diagnostics)")
        // The remote keeps exactly what it had: the NFC file, unchanged.
        let remote = try TreeComparison.files(in: work.destination)
        #expect(remote.count == 2 && remote.keys.contains { $0.utf8.elementsEqual(Self.nfc.utf8) }, "\(remote.keys)")
        #expect(try TreeComparison.sameContent(work.source + "/" + Self.nfc, work.destination + "/" + Self.nfc))
    }

    @Test("two remote files whose names differ only by Unicode normalization both fail on pull, on a real server")
    func remoteNormalizationClash() async throws {
        let server = try await TestServer(.nginx)
        try FileManager.default.createDirectory(atPath: server.directory + "/root/forms", withIntermediateDirectories: true)
        try Data("nfc".utf8).write(to: URL(fileURLWithPath: server.directory + "/root/forms/" + Self.nfc))
        try Data("NFD, longer".utf8).write(to: URL(fileURLWithPath: server.directory + "/root/forms/" + Self.nfd))
        try Data("fine".utf8).write(to: URL(fileURLWithPath: server.directory + "/root/forms/ok.jpg"))
        let work = try Self.workspace()
        let run = try await work.ferry(["pull", work.destination, "--from", "dav://" + server.origin.dropFirst("http://".count)
                                        + "/dav/forms/", "--state", work.state, "--json"])
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(run.events(named: "failed").count == 2, "\(run.diagnostics)")
        #expect(Array(try TreeComparison.files(in: work.destination).keys) == ["ok.jpg"])
    }

    // MARK: Item 8: bundles

    static let bundleName = "bundle-20200101T000000Z-00000001.tar.zst"

    /// A local remote (`dst/`) holding one bundle file with `bundle` bytes and a manifest
    /// that names `member` as the file `restored.bin` of `size` bytes.
    static func hostileBundle(_ work: Workspace, bundle: String, member: String = "zeros.bin", size: Int64,
                              padding: Int = 0) throws {
        let folder = work.destination + "/.ferry-bundles"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: bundle, toPath: folder + "/" + bundleName)
        let manifest: [String: Any] = [
            "ferryBundleManifest": 1, "bundle": bundleName, "format": "tar.zst", "size": 10240, "createdAt": 1_577_836_800.0,
            "members": [["path": "restored.bin", "entry": member, "size": size, "modifiedNanos": 1_600_000_000_000_000_000,
                         "sha256": MemberHash.hex(of: [UInt8](repeating: 0, count: Int(size)))]],
        ]
        // JSON may end in any amount of white space: a manifest can be large and valid.
        let data = try JSONSerialization.data(withJSONObject: manifest) + Data(repeating: 0x20, count: padding)
        try data.write(to: URL(fileURLWithPath: folder + "/" + bundleName + ".manifest.json"))
    }

    /// Runs ferry with the size of any file it writes limited (`ulimit -f`, in KiB): past
    /// it, the kernel kills it with SIGXFSZ.
    static func ferryWithFileSizeLimit(_ work: Workspace, kib: Int, _ arguments: [String],
                                       environment: [String: String] = [:]) async throws -> FerryProcess.Result {
        try await FerryProcess.run(["-c", "ulimit -f \(kib) && exec \"$0\" \"$@\"", FerryProcess.executable] + arguments,
                                   in: work.directory.path, environment: environment, executable: "/bin/bash")
    }

    @Test("a bundle member larger than its manifest says is stopped at the manifest's size, not extracted whole")
    func bundleBomb() async throws {
        let work = try Self.workspace()
        let scratch = TemporaryDirectory()
        // 256 MiB of zeros: a few KiB once compressed. Written from a sparse file.
        let zeros = scratch.child("zeros")
        #expect(FileManager.default.createFile(atPath: zeros, contents: nil))
        #expect(truncate(zeros, 256 << 20) == 0)
        let bundle = scratch.child("bomb.tar.zst")
        let writer = try ArchiveWriter(path: bundle, format: .tarZstd)
        _ = try writer.append(file: zeros, as: "zeros.bin", size: 256 << 20, modifiedNanos: 1_600_000_000_000_000_000)
        try writer.finish()
        try Self.hostileBundle(work, bundle: bundle, size: 5)

        // Any file past 32 MiB kills the process: before, the member was extracted whole.
        let run = try await Self.ferryWithFileSizeLimit(work, kib: 32 << 10, [
            "pull", work.directory.child("restored"), "--from", work.destination, "--state", work.state, "--json"])
        #expect(run.status == 1, "\(run.diagnostics)")
        let failed = run.events(named: "failed")
        #expect(failed.count == 1 && (failed.first?["error"] as? String ?? "").contains("holds more than the 5 bytes"),
                "\(run.diagnostics)")
        #expect(try TreeComparison.files(in: work.directory.child("restored")).isEmpty)
    }

    @Test("a bundle that asks for an external decompressor is refused without starting it; so is such an archive in ls")
    func bundleExternalFilter() async throws {
        let work = try Self.workspace()
        // A fake `lzop` first in PATH leaves a mark if anything runs it.
        let bin = work.directory.child("bin")
        let mark = work.directory.child("lzop-ran")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try "#!/bin/sh\ntouch '\(mark)'\ncat\n".write(toFile: bin + "/lzop", atomically: true, encoding: .utf8)
        #expect(chmod(bin + "/lzop", 0o755) == 0)
        // lzop's magic, then nothing of worth.
        let lzop = Data([0x89, 0x4C, 0x5A, 0x4F, 0x00, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 512))
        let bundle = work.directory.child("fake.tar.zst")
        try lzop.write(to: URL(fileURLWithPath: bundle))
        try Self.hostileBundle(work, bundle: bundle, size: 5)
        try lzop.write(to: URL(fileURLWithPath: work.destination + "/photos.tar.lzo"))
        let environment = ["PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]

        let pull = try await work.ferry(["pull", work.directory.child("restored"), "--from", work.destination,
                                         "--state", work.state, "--json"], environment: environment)
        #expect(pull.status == 1, "\(pull.diagnostics)")
        #expect(pull.events(named: "failed").count == 1, "\(pull.diagnostics)")
        let list = try await FerryProcess.run(["ls", work.destination, "--archive-contents"], in: work.directory.path,
                                              environment: environment)
        #expect(list.status == 1, "\(list.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: mark), "libarchive started the external lzop")
    }

    @Test("a manifest larger than a manifest can be is refused unread")
    func oversizedManifest() async throws {
        let work = try Self.workspace()
        let scratch = TemporaryDirectory()
        let bundle = try ArchiveBoundsFixture.zeroBundle(in: scratch, size: 5)
        try Self.hostileBundle(work, bundle: bundle, size: 5, padding: 20 << 20)
        let run = try await work.ferry(["pull", work.directory.child("restored"), "--from", work.destination,
                                        "--state", work.state])
        #expect(run.status == 1, "\(run.diagnostics)")
        #expect(run.standardError.contains("more than the 16 MiB a manifest can be"), "\(run.diagnostics)")
    }
}

/// Small bundles for the cases above.
enum ArchiveBoundsFixture {
    static func zeroBundle(in directory: TemporaryDirectory, size: Int64) throws -> String {
        let source = directory.child("zeros")
        #expect(FileManager.default.createFile(atPath: source, contents: nil))
        #expect(truncate(source, off_t(size)) == 0)
        let archive = directory.child("bundle.tar.zst")
        let writer = try ArchiveWriter(path: archive, format: .tarZstd)
        _ = try writer.append(file: source, as: "zeros.bin", size: size, modifiedNanos: 1_600_000_000_000_000_000)
        try writer.finish()
        return archive
    }
}
