import FerryTestSupport
import Foundation
import Testing

/// What one shared folder must hold once several devices synced it, written for checking
/// every device's tree and the remote's with the same rules.
struct ExpectedTree {
    /// Files that must be there with exactly this content.
    var exact: [String: String] = [:]
    /// Files deleted on one device, which no other device may bring back.
    var gone: [String] = []
    /// Files changed on two devices since their last sync: both versions must survive, one
    /// under the name and one under a single conflict copy's name. Which version keeps the
    /// name is the policy's business (keep-both: the newer), not this check's.
    var bothKept: [String: [String]] = [:]

    /// One line per way `tree` falls short: an edit lost, a deleted file back, a version of
    /// a conflict gone, a file nobody wrote. Empty when the tree is right.
    func problems(in tree: [String: String]) -> [String] {
        var problems: [String] = []
        for (path, content) in exact.sorted(by: { $0.key < $1.key }) {
            guard let found = tree[path] else {
                problems.append("lost: \(path) (\(content.debugDescription))")
                continue
            }
            if found != content {
                problems.append("\(path) holds \(found.debugDescription), not \(content.debugDescription)")
            }
        }
        for path in gone.sorted() where tree[path] != nil {
            problems.append("came back after it was deleted: \(path)")
        }
        for (path, versions) in bothKept.sorted(by: { $0.key < $1.key }) {
            let copies = Self.conflictCopies(of: path, in: tree)
            if tree[path] == nil {
                problems.append("\(path): nothing under its own name")
            }
            if copies.count != 1 {
                problems.append("\(path): \(copies.count) conflict copies \(copies.keys.sorted()), not one")
            }
            let found = Self.versions(of: path, in: tree).sorted()
            if found != versions.sorted() {
                problems.append("\(path): versions \(found.map(\.debugDescription)), not \(versions.sorted().map(\.debugDescription))")
            }
        }
        let known = Set(exact.keys).union(gone).union(bothKept.keys)
        for path in tree.keys.sorted() where !known.contains(path) {
            if let original = Self.original(ofConflictCopy: path), bothKept[original] != nil { continue }
            problems.append("unexpected: \(path)")
        }
        return problems
    }

    /// `NAME.EXT` for a conflict copy `NAME.conflict-YYYYMMDD-HHMMSS-HOST.EXT`; nil for any
    /// other name.
    static func original(ofConflictCopy path: String) -> String? {
        guard let range = path.range(of: #"\.conflict-\d{8}-\d{6}-[A-Za-z0-9_-]+"#, options: .regularExpression) else {
            return nil
        }
        return path.replacingCharacters(in: range, with: "")
    }

    static func conflictCopies(of path: String, in tree: [String: String]) -> [String: String] {
        tree.filter { original(ofConflictCopy: $0.key) == path }
    }

    /// Every version of `path` in `tree`: under its name, then under its conflict copies'.
    static func versions(of path: String, in tree: [String: String]) -> [String] {
        (tree[path].map { [$0] } ?? []) + conflictCopies(of: path, in: tree).sorted { $0.key < $1.key }.map(\.value)
    }

    /// How `tree` differs from `reference`, one line per path; empty when they are equal.
    static func differences(_ tree: [String: String], from reference: [String: String]) -> [String] {
        Set(tree.keys).union(reference.keys).sorted().compactMap { (path: String) -> String? in
            switch (tree[path], reference[path]) {
            case (nil, _):
                return "missing: \(path)"
            case (_, nil):
                return "extra: \(path)"
            case let (found?, wanted?) where found != wanted:
                return "\(path): \(found.debugDescription) instead of \(wanted.debugDescription)"
            default:
                return nil
            }
        }
    }
}

/// One device: a local folder, a state folder (journal, lock, catalog digest) of its own,
/// and its folder's name in config.yml. Separate state folders make the devices as
/// independent as separate machines: no shared journal, no shared lock.
struct Device: Sendable {
    let name: String
    let folder: String
    let path: String
    let state: String

    init(_ name: String, in work: Workspace) {
        self.name = name
        folder = "device-\(name)"
        path = work.directory.child(name)
        state = work.directory.child("state-\(name)")
    }

    func syncArguments(config: String) -> [String] {
        ["sync", folder, "--config", config, "--state", state, "--json"]
    }

    /// The device's folder under `folders:` in config.yml, on `remote`, in two-way mode
    /// with the default conflict policy (keep-both). `hidden_names: ignore`: the folder has
    /// no hidden names, and whether nginx's hiding of them is noticed without a catalog is
    /// the subject of `RemoteCompletenessTests`, not of this suite.
    func folderLines(remote: String, hiddenNames: Bool = false) -> [String] {
        ["  \(folder):", "    path: \(path)", "    remote: \(remote)", "    mode: sync"] + (hiddenNames ? [] : ["    hidden_names: ignore"])
    }
}

/// The changes three devices make to one shared folder of 40 small text files between
/// two syncs. Every version's content is unique (it names its file and its writer) and
/// differs in size from the others, so a comparison says exactly which version is where;
/// each writer's modification time is its own (base t0, A t0+100 s, B t0+200 s).
enum DeviceEdits {
    static let all = (0..<40).map { "folder-\($0 % 4)/note-\($0).txt" }
    static var editedOnA: [String] { Array(all[0..<6]) }
    static var editedOnB: [String] { Array(all[6..<12]) }
    static var deletedOnC: [String] { Array(all[12..<16]) }
    /// Changed on A and on B, differently: a conflict whichever device syncs first.
    static var editedOnBoth: [String] { Array(all[16..<19]) }
    static var untouched: [String] { Array(all[19...]) }
    static let addedOnA = (0..<3).map { "folder-\($0)/added-on-a-\($0).txt" }
    static let addedOnB = (0..<3).map { "folder-\($0 + 1)/added-on-b-\($0).txt" }
    /// Added on C and sent by a run killed with SIGKILL after its first file: what that run
    /// left (files sent, partial uploads, notes in its journal) is taken up by the next.
    static let addedOnCKilled = (0..<12).map { "folder-\($0 % 4)/killed-on-c-\($0).bin" }
    static func fromKilledC(_ path: String) -> String {
        "\(path): written on device C, whose run was killed\n" + String(repeating: "c", count: 20_000)
    }

    static func writeKilledRun(in c: String) throws {
        for path in addedOnCKilled {
            try SyncMatrix.write(fromKilledC(path), at: c + "/" + path, modified: t0.addingTimeInterval(300))
        }
    }

    static var t0: Date { SyncMatrix.t0 }

    static func base(_ path: String) -> String { "\(path): the first version\n" }
    static func fromA(_ path: String) -> String { "\(path): written on device A\n" }
    static func fromB(_ path: String) -> String { "\(path): written on device B, a longer line\n" }

    static func writeBase(in root: String) throws {
        for path in all {
            try SyncMatrix.write(base(path), at: root + "/" + path, modified: t0)
        }
    }

    /// What each device does while the others do theirs; C renames nothing.
    static func apply(a: String, b: String, c: String) throws {
        let byA = t0.addingTimeInterval(100)
        let byB = t0.addingTimeInterval(200)
        for path in editedOnA + editedOnBoth + addedOnA {
            try SyncMatrix.write(fromA(path), at: a + "/" + path, modified: byA)
        }
        for path in editedOnB + editedOnBoth + addedOnB {
            try SyncMatrix.write(fromB(path), at: b + "/" + path, modified: byB)
        }
        for path in deletedOnC {
            try FileManager.default.removeItem(atPath: c + "/" + path)
        }
    }

    static var expected: ExpectedTree {
        var tree = ExpectedTree()
        for path in untouched { tree.exact[path] = base(path) }
        for path in editedOnA + addedOnA { tree.exact[path] = fromA(path) }
        for path in editedOnB + addedOnB { tree.exact[path] = fromB(path) }
        for path in addedOnCKilled { tree.exact[path] = fromKilledC(path) }
        tree.gone = deletedOnC
        for path in editedOnBoth { tree.bothKept[path] = [fromA(path), fromB(path)] }
        return tree
    }
}

/// The one file two devices race for in `SeveralDevicesTests.heldWrite`, and a bystander.
enum RaceEdits {
    static let file = "notes/f.txt"
    static let other = "notes/g.txt"
    static func base(_ path: String) -> String { "\(path): the version both devices synced\n" }
    static let fromA = "notes/f.txt: written on device A while B's write was held\n"
    static let fromB = "notes/f.txt: written on device B, whose plan saw the first version\n"

    static var expected: ExpectedTree {
        var tree = ExpectedTree()
        tree.exact[other] = base(other)
        tree.bothKept[file] = [fromA, fromB]
        return tree
    }
}

/// A remote of one kind that the devices share, started for one test.
struct SharedRemote {
    /// The remote's keys, as lines under its name in config.yml.
    let settings: [String]
    /// Where its files lie on this machine, to read them without Ferry; nil for the S3
    /// stores, whose files are read through a fresh device instead.
    let disk: String?
    /// Folders on `disk` that are not the user's files (a server's own, Ferry's catalog).
    let bookkeeping: Set<String>
    /// What a `ferry` process needs to reach it (S3 credentials).
    let environment: [String: String]
    /// Held so that the server runs for as long as the test.
    let webServer: TestServer?
    let store: S3TestServer?
    /// A proxy in front of an S3 store that logs every request (`countingRequests`).
    var proxy: FaultProxy? = nil
    /// Lines added to every device's folder in config.yml.
    var folderSettings: [String] = []

    /// The requests the remote answered so far ("METHOD PATH …"): a web server's access log,
    /// or the proxy's; nil for a local folder, or an S3 store started without the proxy.
    var requests: [String]? { webServer?.accessLog ?? proxy?.requests }

    static func start(_ kind: SeveralDevicesTests.RemoteKind, in work: Workspace,
                      countingRequests: Bool = false) async throws -> SharedRemote {
        switch kind {
        case .local:
            let folder = work.directory.child("remote")
            return SharedRemote(settings: ["type: local", "path: \(folder)"], disk: folder,
                                bookkeeping: TreeComparison.ferryRecords, environment: [:], webServer: nil, store: nil)
        case .nginx, .apache:
            // The remote folder is left for Ferry to create: one made here would belong to
            // this process's user, and Apache could not write into it.
            // The server checks `Overwrite: F` before it renames, so the devices take a
            // write lease here too, one outlived after 40 s like S3's below.
            let server = try await TestServer(kind == .nginx ? .nginx : .apache)
            return SharedRemote(settings: ["type: webdav", "url: \(server.url("/dav/several"))"],
                                disk: server.directory + "/root/several",
                                bookkeeping: server.bookkeepingFolders.union(TreeComparison.ferryRecords),
                                environment: ["FERRY_WRITE_LEASE_SECONDS": "40"], webServer: server, store: nil)
        case .seaweedfs, .moto:
            let store = try await S3TestServer(kind == .moto ? .moto : .seaweedfs)
            // S3's move is a copy and a delete: the devices take a write lease, here one that a
            // killed holder's is outlived after 40 s rather than 2 minutes. Not shorter: a
            // holder stops writing when no renewal was confirmed for half of it, and moto,
            // one Python process, answered nothing for 5 s beside two test runs and a busy
            // loop on 2 cores (a 10 s lease), and for over 10 s at a load of 80 (a 20 s
            // lease); the run then rightly exited 1, "run the sync again".
            // The proxy keeps the Host header, so the signatures stay valid.
            let proxy = countingRequests
                ? try await FaultProxy(upstream: store.endpoint, share: 0, options: ["--keep-host"]) : nil
            return SharedRemote(settings: ["type: s3", "bucket: \(S3TestServer.bucket)", "prefix: several",
                                           "endpoint: \(proxy?.origin ?? store.endpoint)"],
                                disk: nil, bookkeeping: [],
                                environment: store.environment.merging(["FERRY_WRITE_LEASE_SECONDS": "40"]) { $1 },
                                webServer: nil, store: store, proxy: proxy)
        }
    }

    /// config.yml: this remote as `shared`, and one folder per device on it, all at the
    /// remote's root, so every device syncs the same remote folder.
    func config(for devices: [Device], hiddenNames: Bool = false) -> String {
        var lines = ["remotes:", "  shared:"] + settings.map { "    " + $0 } + ["folders:"]
        for device in devices {
            lines += device.folderLines(remote: "shared", hiddenNames: hiddenNames) + folderSettings.map { "    " + $0 }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Where the race test stops device B: always after B listed the remote and planned to
/// replace the version it saw, and before that replacement is done.
enum HoldPoint: String, CaseIterable, CustomStringConvertible, Sendable {
    /// The exec test plugin `faulty` over the content store holds B's `upload` request:
    /// B has already moved the version it replaces aside, and only the write of the new
    /// one is left, which must then refuse a name another device took meanwhile.
    case storeUpload = "content-store upload"
    /// nginx checks `Overwrite: F` before it renames, so writers there keep apart by the
    /// write lease: the fault proxy holds the PUT of B's lease file, which B writes once it
    /// has planned, before any of its jobs. A then takes the lease and writes; B, let go,
    /// finds A's change marker moved and plans again.
    case nginxLease = "nginx write lease"

    var description: String { rawValue }

    /// The request the fault proxy holds (a regex on `METHOD PATH`) after how many that
    /// match pass (B's first sync, with the release file there, writes its lease once);
    /// nil for the store.
    var heldRequest: (pattern: String, passing: Int)? {
        switch self {
        case .storeUpload: nil
        case .nginxLease: (#"^PUT /dav/race/\.ferry-catalog/[^/]+\.lease$"#, 1)
        }
    }

    /// How B's held run learns of A's version: from a write refused as B makes it (one
    /// file changed meanwhile), or from the plan made again holding the lease (a conflict
    /// kept both ways).
    var learnsWhileWriting: Bool { self == .storeUpload }
}

/// The race test's two remotes onto one place: `for-a`, direct, and `for-b`, through
/// the hold. Both holds follow one protocol in the workspace's folder: `held` is written
/// when the request is held, and it goes on once `release` exists.
struct RaceRemote {
    /// YAML lines under `remotes:`.
    let yaml: String
    /// Where the remote's files lie on this machine.
    let disk: String
    /// Held so that they run for as long as the test.
    let webServer: TestServer?
    let proxy: FaultProxy?
    /// For every run: a lease long enough that no renewal rewrites the lease file while the
    /// test counts its writes.
    var environment: [String: String] = [:]

    static func start(_ point: HoldPoint, in work: Workspace) async throws -> RaceRemote {
        guard let hold = point.heldRequest else {
            return RaceRemote(yaml: work.heldStoreRemote("for-a", hold: nil) + work.heldStoreRemote("for-b", hold: RaceEdits.file),
                              disk: work.directory.child("store/tree"), webServer: nil, proxy: nil)
        }
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0,
                                         options: ["--hold", hold.pattern + ":\(hold.passing)", "--gate", work.directory.path])
        // B's held request says nothing for as long as the test looks: no stall is declared.
        let lines = ["  for-a:", "    type: webdav", "    url: \(server.url("/dav/race"))",
                     "  for-b:", "    type: webdav", "    url: \(proxy.url("/dav/race"))", "    stall_timeout: 3600"]
        return RaceRemote(yaml: lines.joined(separator: "\n") + "\n", disk: server.directory + "/root/race",
                          webServer: server, proxy: proxy, environment: ["FERRY_WRITE_LEASE_SECONDS": "3600"])
    }
}

/// Several devices, one remote: no lost edit, no file that comes back, every device
/// converges. Each device has a journal of its own, so each plans from its own listing;
/// what another device writes between that listing and this device's writes is what these
/// tests are about.
@Suite("several devices, one remote", .integration)
struct SeveralDevicesTests {
    enum RemoteKind: String, CaseIterable, CustomStringConvertible, Sendable {
        case local, nginx, apache, seaweedfs, moto
        var description: String { rawValue }
    }

    /// A run's counts in one line, for the history printed when an expectation fails.
    static func outline(_ result: FerryProcess.Result) -> String {
        let keys = ["uploaded", "downloaded", "deleted", "kept_both", "changed_meanwhile", "conflicts", "failed"]
        let counts = keys.map { key in key + " " + (result.int(key).map { String($0) } ?? "-") }
        return "exit \(result.status): " + counts.joined(separator: ", ")
    }

    /// The three syncs that start together race for real: which device lists, moves aside
    /// or writes first differs from run to run, so this test shows that no interleaving
    /// loses anything, not which one happened. `heldWrite` pins the interleaving down.
    @Test("three devices edit, delete and add, sync at the same moment, then in turn: no lost edit, no file back, one tree everywhere",
          arguments: RemoteKind.allCases)
    func threeDevices(_ kind: RemoteKind) async throws {
        let work = Workspace()
        let remote = try await SharedRemote.start(kind, in: work)
        let devices = ["a", "b", "c"].map { Device($0, in: work) }
        let (a, b, c) = (devices[0], devices[1], devices[2])
        let reader = Device("d", in: work)
        for device in devices + [reader] {
            try FileManager.default.createDirectory(atPath: device.path, withIntermediateDirectories: true)
        }
        let config = work.directory.child("config.yml")
        try Data(remote.config(for: devices).utf8).write(to: URL(fileURLWithPath: config))
        var history: [String] = []
        func syncing(_ device: Device, _ step: String) async throws -> FerryProcess.Result {
            let result = try await work.ferry(device.syncArguments(config: config), environment: remote.environment)
            history.append("\(step) \(device.name): \(Self.outline(result))")
            return result
        }

        // 1. A fills the folder; B and C join with empty folders and receive all of it.
        try DeviceEdits.writeBase(in: a.path)
        let seeded = try await syncing(a, "first")
        #expect(seeded.status == 0 && seeded.int("uploaded") == DeviceEdits.all.count, "\(seeded.diagnostics)")
        for device in [b, c] {
            let joined = try await syncing(device, "first")
            #expect(joined.status == 0 && joined.int("downloaded") == DeviceEdits.all.count, "device \(device.name): \(joined.diagnostics)")
            #expect(try ExpectedTree.differences(SyncMatrix.contents(of: device.path), from: SyncMatrix.contents(of: a.path)) == [],
                    "device \(device.name)")
        }

        // 2. Each device changes its copy, some files on two devices.
        try DeviceEdits.apply(a: a.path, b: b.path, c: c.path)

        // 3. All three sync at the same moment: the processes are started one right after
        // the other, before any is waited for. Under keep-both a conflict met on the way is
        // settled, not an error, so each exits 0.
        var running: [FerryProcess] = []
        defer { for process in running { process.stopIfRunning() } }
        for device in devices {
            running.append(try FerryProcess(device.syncArguments(config: config), in: work.directory.path,
                                            environment: remote.environment))
        }
        for (device, process) in zip(devices, running) {
            let result = await process.wait()
            history.append("together \(device.name): \(Self.outline(result))")
            #expect(result.status == 0, "device \(device.name), syncing with the others at once: \(result.diagnostics)")
        }

        // 3b. C adds files and syncs, throttled, and is killed (SIGKILL: no clean-up) once
        // its first file is sent; the others go on as if nothing happened.
        try DeviceEdits.writeKilledRun(in: c.path)
        let killedRun = try FerryProcess(c.syncArguments(config: config) + ["--transfers", "1", "--bwlimit", "40k"],
                                         in: work.directory.path, environment: remote.environment)
        running.append(killedRun)
        let killed = await when({ killedRun.outputSoFar.contains(#""event":"transferred""#) }, do: { killedRun.killHard() })
        let killedResult = await killedRun.wait()
        history.append("killed c: exit \(killedResult.status)")
        #expect(killed && killedResult.status != 0, "C's run was to be killed mid-way: \(killedResult.diagnostics)")

        // 4. Then each in turn, twice: the first round carries every device's changes to
        // the remote and settles the conflicts; the second brings each device what the
        // devices after it did in the first.
        for round in 1...2 {
            for device in devices {
                let result = try await syncing(device, "round \(round)")
                #expect(result.status == 0, "round \(round), device \(device.name): \(result.diagnostics)")
            }
        }

        // 5. One tree everywhere: the three devices, the remote as a fresh device pulls it
        // (the only way to read an S3 store), and the remote's disk where there is one.
        let pulled = try await work.ferry(["pull", reader.path, "--from", "shared", "--config", config, "--state", reader.state,
                                           "--json", "--ignore-hidden-names"], environment: remote.environment)
        #expect(pulled.status == 0, "\(pulled.diagnostics)")
        var trees: [(label: String, files: [String: String])] = []
        for device in devices {
            let files = try SyncMatrix.contents(of: device.path)
            trees.append((label: "device \(device.name)", files: files))
        }
        let fromRemote = try SyncMatrix.contents(of: reader.path)
        trees.append((label: "a fresh pull of the remote", files: fromRemote))
        if let disk = remote.disk {
            let onDisk = try SyncMatrix.contents(of: disk, ignoring: remote.bookkeeping)
            trees.append((label: "the remote's disk", files: onDisk))
        }
        let runs = history.joined(separator: "\n")
        for tree in trees {
            let differences = ExpectedTree.differences(tree.files, from: trees[0].files)
            #expect(differences == [], "\(tree.label) differs from device a:\n\(differences.joined(separator: "\n"))\n\(runs)")
            // Every edit of A and B kept, C's deletions not undone, both versions of each
            // file changed on A and B, every added file.
            let problems = DeviceEdits.expected.problems(in: tree.files)
            // A file the killed run sent just before the kill, with no time to record it, is
            // met again on both sides; its copies are compared, not kept both ways.
            #expect(problems == [], "\(tree.label):\n\(problems.joined(separator: "\n"))\n\(runs)")
        }
        for root in devices.map(\.path) + [reader.path] + (remote.disk.map { [$0] } ?? []) {
            #expect(try work.temporaryFiles(in: root) == [], "\(root)")
        }

        // Settled: another sync on any device finds nothing to do.
        for device in devices {
            let settled = try await syncing(device, "settled")
            #expect(settled.status == 0, "device \(device.name): \(settled.diagnostics)")
            #expect(settled.int("uploaded") == 0 && settled.int("downloaded") == 0 && settled.int("deleted") == 0,
                    "device \(device.name) still found work: \(settled.diagnostics)\n\(runs)")
        }
        withExtendedLifetime(remote) {}
    }

    /// A folder that may not delete on its remote (`remote_rights: [read, write]`) replaces
    /// no version in place: each replaced version goes into the versions folder. Two devices
    /// that replace the same files at the same instant must still each keep theirs, and
    /// neither may take the other's write for its own (which once left them silently
    /// different, each sure it was in sync).
    @Test("append-only: two devices edit the same files and sync at the same instant: both versions kept, the first in the versions folder, no DELETE",
          arguments: RemoteKind.allCases)
    func appendOnlyAtOnce(_ kind: RemoteKind) async throws {
        let work = Workspace()
        var remote = try await SharedRemote.start(kind, in: work, countingRequests: true)
        remote.folderSettings = ["remote_rights: [read, write]"]
        let (a, b) = (Device("a", in: work), Device("b", in: work))
        let reader = Device("r", in: work)
        for device in [a, b, reader] {
            try FileManager.default.createDirectory(atPath: device.path, withIntermediateDirectories: true)
            // Named as two machines would be: both make a conflict copy of every file in the
            // same second, and two copies named alike (one host name) would meet on the remote.
            try FileManager.default.createDirectory(atPath: device.state, withIntermediateDirectories: true)
            try Data("device-\(device.name)\n".utf8).write(to: URL(fileURLWithPath: device.state + "/device-name"))
        }
        let config = work.directory.child("config.yml")
        try Data(remote.config(for: [a, b]).utf8).write(to: URL(fileURLWithPath: config))
        var history: [String] = []
        func syncing(_ device: Device, _ step: String) async throws -> FerryProcess.Result {
            let result = try await work.ferry(device.syncArguments(config: config), environment: remote.environment)
            history.append("\(step) \(device.name): \(Self.outline(result))")
            return result
        }

        let files = (0..<12).map { "album-\($0 % 3)/track-\($0).gpx" }
        for path in files { try SyncMatrix.write(DeviceEdits.base(path), at: a.path + "/" + path, modified: DeviceEdits.t0) }
        let seeded = try await syncing(a, "first")
        #expect(seeded.status == 0 && seeded.int("uploaded") == files.count, "\(seeded.diagnostics)")
        let joined = try await syncing(b, "first")
        #expect(joined.status == 0 && joined.int("downloaded") == files.count, "\(joined.diagnostics)")

        for path in files {
            try SyncMatrix.write(DeviceEdits.fromA(path), at: a.path + "/" + path, modified: DeviceEdits.t0.addingTimeInterval(100))
            try SyncMatrix.write(DeviceEdits.fromB(path), at: b.path + "/" + path, modified: DeviceEdits.t0.addingTimeInterval(200))
        }
        var running: [FerryProcess] = []
        defer { for process in running { process.stopIfRunning() } }
        for device in [a, b] {
            running.append(try FerryProcess(device.syncArguments(config: config), in: work.directory.path,
                                            environment: remote.environment))
        }
        for (device, process) in zip([a, b], running) {
            let result = await process.wait()
            history.append("together \(device.name): \(Self.outline(result))")
            #expect(result.status == 0, "device \(device.name), syncing with the other at once: \(result.diagnostics)")
        }
        for round in 1...2 {
            for device in [a, b] {
                let result = try await syncing(device, "round \(round)")
                #expect(result.status == 0, "round \(round), device \(device.name): \(result.diagnostics)")
            }
        }

        // Both edits of every file on both devices and in a fresh pull: one under the name,
        // one as a conflict copy.
        var expected = ExpectedTree()
        for path in files { expected.bothKept[path] = [DeviceEdits.fromA(path), DeviceEdits.fromB(path)] }
        let pulled = try await work.ferry(["pull", reader.path, "--from", "shared", "--config", config, "--state", reader.state,
                                           "--json", "--ignore-hidden-names"], environment: remote.environment)
        #expect(pulled.status == 0, "\(pulled.diagnostics)")
        let runs = history.joined(separator: "\n")
        let reference = try SyncMatrix.contents(of: a.path)
        for (label, root) in [("device a", a.path), ("device b", b.path), ("a fresh pull", reader.path)] {
            let tree = try SyncMatrix.contents(of: root)
            let differences = ExpectedTree.differences(tree, from: reference)
            #expect(differences == [], "\(label) differs from device a:\n\(differences.joined(separator: "\n"))\n\(runs)")
            let problems = expected.problems(in: tree)
            #expect(problems == [], "\(label):\n\(problems.joined(separator: "\n"))\n\(runs)")
        }
        // The version both replaced is in the versions folder.
        for path in files {
            let listed = try await work.ferry(["versions", a.path + "/" + path, "--config", config, "--state", a.state, "--json"],
                                              environment: remote.environment)
            let sizes = listed.events.compactMap { ($0["size"] as? NSNumber)?.intValue }
            #expect(listed.status == 0 && sizes.contains(DeviceEdits.base(path).utf8.count),
                    "\(path): versions \(sizes): \(listed.diagnostics)\n\(runs)")
        }
        // Settled: nothing left to do on either device.
        for device in [a, b] {
            let settled = try await syncing(device, "settled")
            #expect(settled.status == 0 && settled.int("uploaded") == 0 && settled.int("downloaded") == 0,
                    "device \(device.name) still found work: \(settled.diagnostics)\n\(runs)")
        }
        let deletions = (remote.requests ?? []).filter { $0.hasPrefix("DELETE ") }
        #expect(deletions.isEmpty, "\(deletions)")
        if kind != .local { #expect(remote.requests?.contains { $0.hasPrefix("PUT ") } == true, "no request was logged") }
        withExtendedLifetime(remote) {}
    }

    /// Names that start with `.`, which nginx stores and serves but never lists: each
    /// device's catalog of them says what that device put there, so a catalog still lists
    /// a file another device has deleted or replaced since. Deletes and edits of such files
    /// must reach every device as any other file's do.
    @Test("hidden names deleted or edited on one device reach the others", arguments: [RemoteKind.nginx, .local])
    func hiddenNames(_ kind: RemoteKind) async throws {
        let work = Workspace()
        let remote = try await SharedRemote.start(kind, in: work)
        let devices = ["a", "b", "c"].map { Device($0, in: work) }
        let (a, b, c) = (devices[0], devices[1], devices[2])
        for device in devices {
            try FileManager.default.createDirectory(atPath: device.path, withIntermediateDirectories: true)
        }
        let config = work.directory.child("config.yml")
        try Data(remote.config(for: devices, hiddenNames: true).utf8).write(to: URL(fileURLWithPath: config))
        let t0 = SyncMatrix.t0
        let files = ["photos/p.jpg", ".thumbnails/p.jpg", ".thumbnails/q.jpg", ".nomedia", "photos/.nomedia", "photos/.edit/p.xmp"]
        for path in files {
            try SyncMatrix.write("\(path): first\n", at: a.path + "/" + path, modified: t0)
        }
        var history: [String] = []
        func syncing(_ device: Device, _ step: String) async throws {
            let result = try await work.ferry(device.syncArguments(config: config), environment: remote.environment)
            history.append("\(step) \(device.name): \(Self.outline(result))")
            #expect(result.status == 0, "\(step), device \(device.name): \(result.diagnostics)")
        }
        for device in devices { try await syncing(device, "first") }
        for device in [b, c] {
            #expect(try SyncMatrix.contents(of: device.path) == SyncMatrix.contents(of: a.path), "device \(device.name)")
        }

        // C deletes a hidden file in a hidden folder, a hidden file in a listed folder and
        // a file in a hidden folder below a listed one; B edits two hidden files A put there.
        for path in [".thumbnails/p.jpg", "photos/.nomedia", "photos/.edit/p.xmp"] {
            try FileManager.default.removeItem(atPath: c.path + "/" + path)
        }
        for path in [".nomedia", ".thumbnails/q.jpg"] {
            try SyncMatrix.write("\(path): edited on B, longer\n", at: b.path + "/" + path, modified: t0.addingTimeInterval(100))
        }
        for round in 1...2 {
            for device in [c, b, a] { try await syncing(device, "round \(round)") }
        }
        var expected: [String: String] = ["photos/p.jpg": "photos/p.jpg: first\n"]
        for path in [".nomedia", ".thumbnails/q.jpg"] { expected[path] = "\(path): edited on B, longer\n" }
        let runs = history.joined(separator: "\n")
        for device in devices {
            #expect(try SyncMatrix.contents(of: device.path) == expected, "device \(device.name)\n\(runs)")
        }
        if let disk = remote.disk {
            #expect(try SyncMatrix.contents(of: disk, ignoring: remote.bookkeeping) == expected, "the remote's disk\n\(runs)")
        }
        withExtendedLifetime(remote) {}
    }

    /// What a sync costs when the other device changed nothing, or one file: counted at a
    /// proxy in front of nginx, which logs each request before the client has its answer.
    /// The folder is large enough (300 files in 30 folders) that a full listing could not
    /// hide under the limits.
    /// S3's move is a copy and a delete, so two-way devices there write one at a time
    /// (`WriteLease`). The other holder here is a lease file put on the store by hand: one
    /// renewed all along (a device that writes for a long time), then one left alone (a
    /// device killed while it held the lease).
    @Test("on S3 a sync waits for another device's write lease: it gives up naming the holder, and outlives a crashed one")
    func writeLease() async throws {
        let work = Workspace()
        let store = try await S3TestServer(.moto)
        // A 20 s lease: the syncing device itself stops writing when 10 s pass without a
        // renewal moto confirmed, and moto, one Python process, has gone quiet for 5-10 s
        // on a loaded machine (with a 4 s lease, the outliving sync below exited 1).
        let environment = store.environment.merging(["FERRY_WRITE_LEASE_SECONDS": "20"]) { $1 }
        let remote = SharedRemote(settings: ["type: s3", "bucket: \(S3TestServer.bucket)", "prefix: leased",
                                             "endpoint: \(store.endpoint)"],
                                  disk: nil, bookkeeping: [], environment: environment, webServer: nil, store: store)
        let a = Device("a", in: work)
        try SyncMatrix.write("first\n", at: a.path + "/notes/f.txt", modified: SyncMatrix.t0)
        let config = work.directory.child("config.yml")
        try Data(remote.config(for: [a]).utf8).write(to: URL(fileURLWithPath: config))
        let first = try await work.ferry(a.syncArguments(config: config), environment: environment)
        #expect(first.status == 0 && first.int("uploaded") == 1, "\(first.diagnostics)")

        // The other writer renews from a process of its own, every 0.2 s: far within the
        // lease, however busy this machine is.
        let ghost = "leased/.ferry-catalog/ghost-1.lease"
        store.put(key: ghost, contents: "ferry-lease 1\ndevice the-ghost\nrenewal 0\n")
        let renewer = try store.keepRewriting(key: ghost, header: "ferry-lease 1\ndevice the-ghost\n", scratch: work.directory.path)
        try SyncMatrix.write("second, longer\n", at: a.path + "/notes/f.txt", modified: SyncMatrix.t0.addingTimeInterval(60))
        let waited = try await work.ferry(a.syncArguments(config: config), environment: environment)
        renewer.stop()
        #expect(waited.status != 0, "\(waited.diagnostics)")
        #expect(waited.diagnostics.contains("another device (the-ghost) is writing") && waited.diagnostics.contains("write lease"),
                "\(waited.diagnostics)")
        #expect(waited.int("uploaded") ?? 0 == 0)

        // The ghost stops renewing: its lease is outlived, and removed.
        let outlived = try await work.ferry(a.syncArguments(config: config), environment: environment)
        #expect(outlived.status == 0 && outlived.int("uploaded") == 1, "\(outlived.diagnostics)")
        let reader = Device("r", in: work)
        try FileManager.default.createDirectory(atPath: reader.path, withIntermediateDirectories: true)
        try Data(remote.config(for: [reader]).utf8).write(to: URL(fileURLWithPath: config))
        let pulled = try await work.ferry(reader.syncArguments(config: config), environment: environment)
        #expect(pulled.status == 0, "\(pulled.diagnostics)")
        #expect((try? String(contentsOfFile: reader.path + "/notes/f.txt", encoding: .utf8)) == "second, longer\n")
        let probe = try await work.ferry(["plugins", "--probe", "s3://\(S3TestServer.bucket)/leased",
                                          "--json"], environment: environment)
        let devices = probe.events.first?["several_devices"] as? [String: Any] ?? [:]
        #expect((devices["write_lease"] as? String)?.contains(".ferry-catalog/WRITER.lease") == true, "\(probe.diagnostics)")
        withExtendedLifetime(remote) {}
    }

    @Test("an unchanged sync makes 2 requests; after one change on A, B lists only the folders A wrote into")
    func knowingNothingChanged() async throws {
        let work = Workspace()
        let server = try await TestServer(.nginx)
        let proxy = try await FaultProxy(upstream: server.origin, share: 0)
        let devices = ["a", "b"].map { Device($0, in: work) }
        let (a, b) = (devices[0], devices[1])
        let folders = (0..<30).map { "folder-\($0)" }
        for folder in folders {
            for index in 0..<10 {
                try SyncMatrix.write("\(folder) \(index)\n", at: a.path + "/\(folder)/f\(index).txt", modified: SyncMatrix.t0)
            }
        }
        try FileManager.default.createDirectory(atPath: b.path, withIntermediateDirectories: true)
        let remote = SharedRemote(settings: ["type: webdav", "url: \(proxy.url("/dav/marked"))"], disk: nil, bookkeeping: [],
                                  environment: [:], webServer: server, store: nil)
        let config = work.directory.child("config.yml")
        try Data(remote.config(for: devices).utf8).write(to: URL(fileURLWithPath: config))
        /// A sync's requests, as the proxy saw them (`METHOD PATH`).
        func requests(of device: Device, _ extra: [String] = []) async throws -> (result: FerryProcess.Result, requests: [String]) {
            let before = proxy.requests.count
            let result = try await work.ferry(device.syncArguments(config: config) + extra)
            #expect(result.status == 0, "device \(device.name): \(result.diagnostics)")
            let made = proxy.requests.dropFirst(before).map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
            return (result, made)
        }
        // A has a name of its own, which B shows as where the last change came from.
        try FileManager.default.createDirectory(atPath: a.state, withIntermediateDirectories: true)
        try Data("laptop-a\n".utf8).write(to: URL(fileURLWithPath: a.state + "/device-name"))
        _ = try await requests(of: a)
        _ = try await requests(of: b)
        // B's first sync listed everything and saw A's marker; its second vouches on it.
        let unchanged = try await requests(of: b)
        #expect(unchanged.requests.count <= 2, "\(unchanged.requests.joined(separator: "\n"))")
        #expect(unchanged.result.int("downloaded") == 0)

        // A edits a file in one folder and adds one in another.
        try SyncMatrix.write("edited on A, longer\n", at: a.path + "/folder-3/f1.txt", modified: SyncMatrix.t0.addingTimeInterval(60))
        try SyncMatrix.write("added on A\n", at: a.path + "/folder-17/new.txt", modified: SyncMatrix.t0.addingTimeInterval(60))
        let written = try await requests(of: a)
        #expect(written.result.int("uploaded") == 2, "\(written.result.diagnostics)")
        let changed = try await requests(of: b)
        #expect(changed.result.int("downloaded") == 2, "\(changed.result.diagnostics)")
        let transfers = changed.requests.filter { $0.hasPrefix("GET /dav/marked/folder-") }
        let listings = changed.requests.filter { $0.hasPrefix("PROPFIND /dav/marked/folder-") }
        // A run with jobs on WebDAV holds the write lease (and its first upload in this
        // process, the lease file, probes the server): counted apart, and bounded too.
        let leasing = changed.requests.filter { $0.contains(".lease") || $0.contains(".ferry-probe") }
        #expect(leasing.filter { $0.contains(".lease") }.count <= 5, "\(changed.requests.joined(separator: "\n"))")
        #expect(transfers.count == 2, "\(changed.requests.joined(separator: "\n"))")
        #expect(Set(listings) == ["PROPFIND /dav/marked/folder-3/", "PROPFIND /dav/marked/folder-17/"],
                "\(changed.requests.joined(separator: "\n"))")
        #expect(changed.requests.count - transfers.count - listings.count - leasing.count <= 6,
                "\(changed.requests.joined(separator: "\n"))")
        #expect(try String(contentsOfFile: b.path + "/folder-3/f1.txt", encoding: .utf8) == "edited on A, longer\n")
        #expect(try String(contentsOfFile: b.path + "/folder-17/new.txt", encoding: .utf8) == "added on A\n")
        let status = try await work.ferry(["status", b.folder, "--config", config, "--state", b.state, "--json"])
        let folder = (status.events.first?["folders"] as? [[String: Any]])?.first
        #expect((folder?["last_remote_change"] as? [String: Any])?["device"] as? String == "laptop-a", "\(status.diagnostics)")

        // A, whose own marker is the only one that moved, has nothing to learn.
        let own = try await requests(of: a)
        #expect(own.requests.count <= 2, "\(own.requests.joined(separator: "\n"))")
        // --full lists every folder whatever the markers say.
        let full = try await requests(of: b, ["--full"])
        #expect(full.requests.filter { $0.hasPrefix("PROPFIND /dav/marked/folder-") }.count == folders.count,
                "\(full.requests.joined(separator: "\n"))")
        withExtendedLifetime(remote) {}
    }

    /// The interleaving `threeDevices` can only hope for, made certain: B has listed the
    /// remote and planned to replace the version it saw, and is stopped there until A has
    /// written its own version of the same file. A write that replaced unconditionally
    /// would put B's version over A's, A's next sync would take B's version as the
    /// remote's latest, and A's edit would survive only in a trash folder. A write
    /// conditional on the version the plan saw finds the change instead, and keep-both
    /// keeps both versions.
    @Test("a write held between B's plan and its replacement of the file while A writes the same file: both versions survive everywhere",
          arguments: HoldPoint.allCases)
    func heldWrite(_ point: HoldPoint) async throws {
        let work = Workspace()
        let race = try await RaceRemote.start(point, in: work)
        let a = Device("a", in: work)
        let b = Device("b", in: work)
        for device in [a, b] {
            try FileManager.default.createDirectory(atPath: device.path, withIntermediateDirectories: true)
        }
        let config = work.directory.child("config.yml")
        let folders = a.folderLines(remote: "for-a") + b.folderLines(remote: "for-b")
        try ("remotes:\n" + race.yaml + "folders:\n" + folders.joined(separator: "\n") + "\n")
            .write(toFile: config, atomically: true, encoding: .utf8)
        let held = work.directory.child("held")
        let release = work.directory.child("release")
        let t0 = SyncMatrix.t0

        // A and B both hold the first version of the files. Nothing is held while `release`
        // exists (the proxy holds only B's requests, and none of these matches).
        try Data("release\n".utf8).write(to: URL(fileURLWithPath: release))
        for path in [RaceEdits.file, RaceEdits.other] {
            try SyncMatrix.write(RaceEdits.base(path), at: a.path + "/" + path, modified: t0)
        }
        let seeded = try await work.ferry(a.syncArguments(config: config), environment: race.environment)
        #expect(seeded.status == 0 && seeded.int("uploaded") == 2, "\(seeded.diagnostics)")
        let joined = try await work.ferry(b.syncArguments(config: config), environment: race.environment)
        #expect(joined.status == 0 && joined.int("downloaded") == 2, "\(joined.diagnostics)")
        try FileManager.default.removeItem(atPath: release)

        try SyncMatrix.write(RaceEdits.fromA, at: a.path + "/" + RaceEdits.file, modified: t0.addingTimeInterval(100))
        try SyncMatrix.write(RaceEdits.fromB, at: b.path + "/" + RaceEdits.file, modified: t0.addingTimeInterval(200))

        // B plans to replace the first version and is stopped on its way; A then writes its
        // version to completion; then B goes on.
        let stopped = try FerryProcess(b.syncArguments(config: config), in: work.directory.path, environment: race.environment)
        defer { stopped.stopIfRunning() }
        guard await when({ FileManager.default.fileExists(atPath: held) }) else { return }
        let written = try await work.ferry(a.syncArguments(config: config), environment: race.environment)
        #expect(written.status == 0 && written.int("uploaded") == 1, "\(written.diagnostics)")
        try Data("release\n".utf8).write(to: URL(fileURLWithPath: release))
        let resumed = await stopped.wait()
        #expect(resumed.status == 0, "\(resumed.diagnostics)")
        // The moment that matters: B's write went on after A's, and A's version is still
        // on the remote, under the name or a conflict copy's.
        let afterB = try SyncMatrix.contents(of: race.disk, ignoring: TreeComparison.ferryRecords)
        #expect(ExpectedTree.versions(of: RaceEdits.file, in: afterB).contains(RaceEdits.fromA),
                "B replaced A's version, written after B's plan: remote \(afterB)\nB: \(resumed.diagnostics)")
        if point.learnsWhileWriting {
            #expect(resumed.int("changed_meanwhile") == 1, "\(Self.outline(resumed))\n\(resumed.diagnostics)")
        } else {
            #expect(resumed.int("changed_meanwhile") == 0 && resumed.int("kept_both") == 1,
                    "\(Self.outline(resumed))\n\(resumed.diagnostics)")
        }

        // B, then A, sync once more: B settles what it has not yet, A receives it.
        let again = try await work.ferry(b.syncArguments(config: config), environment: race.environment)
        #expect(again.status == 0, "\(again.diagnostics)")
        let received = try await work.ferry(a.syncArguments(config: config), environment: race.environment)
        #expect(received.status == 0, "\(received.diagnostics)")
        let runs = [("B held", resumed), ("B again", again), ("A after", received)]
            .map { "\($0.0): \(Self.outline($0.1))" }.joined(separator: "\n")

        let trees: [(label: String, files: [String: String])] = try [
            (label: "device a", files: SyncMatrix.contents(of: a.path)),
            (label: "device b", files: SyncMatrix.contents(of: b.path)),
            (label: "the remote", files: SyncMatrix.contents(of: race.disk, ignoring: TreeComparison.ferryRecords)),
        ]
        for tree in trees {
            let differences = ExpectedTree.differences(tree.files, from: trees[0].files)
            #expect(differences == [], "\(tree.label) differs from device a:\n\(differences.joined(separator: "\n"))\n\(runs)")
            let problems = RaceEdits.expected.problems(in: tree.files)
            #expect(problems == [], "\(tree.label):\n\(problems.joined(separator: "\n"))\n\(runs)")
        }
        for root in [a.path, b.path, race.disk] {
            #expect(try work.temporaryFiles(in: root) == [], "\(root)")
        }

        // Settled: neither device finds anything left to do.
        for device in [b, a] {
            let settled = try await work.ferry(device.syncArguments(config: config), environment: race.environment)
            #expect(settled.status == 0, "device \(device.name): \(settled.diagnostics)")
            #expect(settled.int("uploaded") == 0 && settled.int("downloaded") == 0 && settled.int("deleted") == 0,
                    "device \(device.name) still found work: \(settled.diagnostics)\n\(runs)")
        }
        withExtendedLifetime(race) {}
    }
}
