import FerryTestSupport
import Foundation
import Testing

/// One folder where every file is in a different cell of the two-way matrix: what
/// happened locally × what happened on the remote since the last sync.
///
/// Names say the cell: `u` unchanged, `c` changed, `d` deleted, `n` created, `a` absent;
/// upper case `C`/`N` are conflicts where the local version is the newer one.
struct SyncMatrix {
    /// Files that exist at the first sync (base content `base-NAME`).
    static let synced = ["u-u", "u-c", "u-d", "c-u", "c-c", "C-C", "c-d", "d-u", "d-c", "d-d"]
    /// Conflicts: both sides changed, or both created with different content.
    static let conflicts = ["c-c", "C-C", "n-n", "N-N"]
    /// Extra unchanged files, so that the run's deletions stay within the 50% guard.
    static let padding = (1...4).map { "pad\($0)" }

    static let t0 = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 86_400).rounded(.down) * 86_400 - 86_400)

    let local: String
    let remote: String

    static func file(_ cell: String) -> String { "m/\(cell).jpg" }
    static func base(_ cell: String) -> String { "base-\(cell)" }
    static func localChange(_ cell: String) -> String { "local-change-\(cell)" }
    static func remoteChange(_ cell: String) -> String { "remote-change-\(cell)-longer" }

    static func write(_ text: String, at path: String, modified: Date) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: path)
    }

    /// The files before the first sync: every synced cell and the padding, locally.
    func prepareBase() throws {
        for cell in Self.synced + Self.padding {
            try Self.write(Self.base(cell), at: local + "/" + Self.file(cell), modified: Self.t0)
        }
    }

    /// What each side does between the two syncs. The remote side is changed on the
    /// server's disk, as another client would.
    func applyChanges() throws {
        let localTime = Self.t0.addingTimeInterval(50)
        let remoteTime = Self.t0.addingTimeInterval(100)
        let localNewer = Self.t0.addingTimeInterval(200)
        for cell in Self.synced + ["n-a", "a-n", "n-n", "N-N"] {
            let parts = cell.split(separator: "-").map(String.init)
            let path = Self.file(cell)
            let isLocalNewer = parts[0].first?.isUppercase == true
            switch parts[0].lowercased() {
            case "c", "n": try Self.write(Self.localChange(cell), at: local + "/" + path, modified: isLocalNewer ? localNewer : localTime)
            case "d": try FileManager.default.removeItem(atPath: local + "/" + path)
            default: break
            }
            switch parts[1].lowercased() {
            case "c", "n": try Self.write(Self.remoteChange(cell), at: remote + "/" + path, modified: remoteTime)
            case "d": try FileManager.default.removeItem(atPath: remote + "/" + path)
            default: break
            }
        }
    }

    /// Contents by relative path, with the trash folder and a server's bookkeeping left out.
    static func contents(of root: String, ignoring: Set<String> = []) throws -> [String: String] {
        var result: [String: String] = [:]
        for (path, _) in try TreeComparison.files(in: root, ignoringFolders: ignoring.union([".ferry-trash"]).union(TreeComparison.ferryRecords)) {
            result[path] = try String(contentsOfFile: root + "/" + path, encoding: .utf8)
        }
        return result
    }

    /// Trash contents by original path (the run's stamp folder dropped).
    static func trash(in folder: String, ignoring: Set<String> = []) throws -> [String: String] {
        var result: [String: String] = [:]
        for (path, _) in try TreeComparison.files(in: folder, ignoringFolders: ignoring) {
            let original = path.split(separator: "/").dropFirst().joined(separator: "/")
            result[original] = try String(contentsOfFile: folder + "/" + path, encoding: .utf8)
        }
        return result
    }

    /// The tree both sides must hold after the second sync, with the conflict copies'
    /// names given as `NAME.conflict.jpg` (the real ones carry a date and host).
    static func expectedTree(policy: String) -> [String: String] {
        var tree: [String: String] = [:]
        for cell in padding + ["u-u"] { tree[file(cell)] = base(cell) }
        for cell in ["u-c", "d-c", "a-n"] { tree[file(cell)] = remoteChange(cell) }
        for cell in ["c-u", "c-d", "n-a"] { tree[file(cell)] = localChange(cell) }
        for cell in conflicts {
            let localNewer = cell.first?.isUppercase == true
            switch policy {
            case "local": tree[file(cell)] = localChange(cell)
            case "remote": tree[file(cell)] = remoteChange(cell)
            case "newer": tree[file(cell)] = localNewer ? localChange(cell) : remoteChange(cell)
            case "keep-both":
                tree[file(cell)] = localNewer ? localChange(cell) : remoteChange(cell)
                tree["m/\(cell).conflict.jpg"] = localNewer ? remoteChange(cell) : localChange(cell)
            default: break
            }
        }
        return tree
    }

    /// What each side's trash must hold after the second sync.
    static func expectedTrash(policy: String) -> (local: [String: String], remote: [String: String]) {
        var local = [file("u-d"): base("u-d"), file("u-c"): base("u-c")]
        var remote = [file("d-u"): base("d-u"), file("c-u"): base("c-u")]
        for cell in conflicts {
            let localNewer = cell.first?.isUppercase == true
            let replacedLocally = policy == "remote" || (policy == "newer" && !localNewer)
            let replacedRemotely = policy == "local" || (policy == "newer" && localNewer)
            if replacedLocally { local[file(cell)] = localChange(cell) }
            if replacedRemotely { remote[file(cell)] = remoteChange(cell) }
        }
        return (local, remote)
    }

    /// Conflict copies' names with the date and host taken out, for comparison.
    static func normalised(_ tree: [String: String]) -> [String: String] {
        var result: [String: String] = [:]
        for (path, content) in tree {
            if let range = path.range(of: #"\.conflict-\d{8}-\d{6}-[A-Za-z0-9_-]+"#, options: .regularExpression) {
                result[path.replacingCharacters(in: range, with: ".conflict")] = content
            } else {
                result[path] = content
            }
        }
        return result
    }
}

@Suite("two-way sync matrix against real remotes", .integration)
struct TwoWaySyncMatrixTests {
    static let policies = ["keep-both", "newer", "local", "remote", "ask"]

    enum RemoteKind: String, CaseIterable, CustomStringConvertible {
        case local, nginx, apache
        var description: String { rawValue }
    }

    /// One server per kind, shared by the policies (each in a folder of its own): starting
    /// a web server costs more than a policy's three syncs.
    @Test("every cell of the matrix with every conflict policy: exact trees, trash and journal statuses",
          arguments: RemoteKind.allCases)
    func matrix(_ kind: RemoteKind) async throws {
        let server: TestServer? = switch kind {
        case .local: nil
        case .nginx: try await TestServer(.nginx)
        case .apache: try await TestServer(.apache)
        }
        for policy in Self.policies {
            try await check(server: server, policy: policy)
        }
    }

    func check(server: TestServer?, policy: String) async throws {
        let work = Workspace()
        let remoteDirectory = server.map { $0.directory + "/root/\(policy)" } ?? work.destination
        let remoteConfig = server.map { "type: webdav\n    url: \($0.url("/dav/\(policy)"))" } ?? "type: local\n    path: dst"
        // The remote folder is left for Ferry to create: a folder made here would belong to
        // this process's user, and Apache could not write into it.
        let config = """
            remotes:
              nas:
                \(remoteConfig)
            folders:
              phone:
                path: src
                remote: nas
                mode: sync
                conflict: \(policy)
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: work.directory.child("config.yml")))
        let matrix = SyncMatrix(local: work.source, remote: remoteDirectory)
        let bookkeeping = (server?.bookkeepingFolders ?? []).union(TreeComparison.ferryRecords)

        try matrix.prepareBase()
        // The remote's files were put there by the test, not by Ferry: no catalog of hidden
        // names exists (there are none), which nginx would otherwise make a pull fail for.
        let first = try await work.ferry(["sync", "phone", "--state", work.state, "--json", "--ignore-hidden-names"])
        #expect(first.status == 0, "policy \(policy): \(first.diagnostics)")
        #expect(first.int("uploaded") == SyncMatrix.synced.count + SyncMatrix.padding.count, "policy \(policy)")

        try matrix.applyChanges()
        let second = try await work.ferry(["sync", "phone", "--state", work.state, "--json"])
        #expect(second.status == (policy == "ask" ? 1 : 0), "policy \(policy): \(second.diagnostics)")

        let localTree = SyncMatrix.normalised(try SyncMatrix.contents(of: work.source))
        let remoteTree = SyncMatrix.normalised(try SyncMatrix.contents(of: remoteDirectory, ignoring: bookkeeping))
        var expected = SyncMatrix.expectedTree(policy: policy)
        if policy == "ask" {
            var localExpected = expected
            var remoteExpected = expected
            for cell in SyncMatrix.conflicts {
                localExpected[SyncMatrix.file(cell)] = SyncMatrix.localChange(cell)
                remoteExpected[SyncMatrix.file(cell)] = SyncMatrix.remoteChange(cell)
            }
            #expect(localTree == localExpected, "policy \(policy)")
            #expect(remoteTree == remoteExpected, "policy \(policy)")
            expected = localExpected
        } else {
            #expect(localTree == expected, "policy \(policy)")
            #expect(remoteTree == expected, "policy \(policy)")
        }
        let trash = SyncMatrix.expectedTrash(policy: policy)
        #expect(try SyncMatrix.trash(in: work.source + "/.ferry-trash") == trash.local, "policy \(policy)")
        #expect(try SyncMatrix.trash(in: remoteDirectory + "/.ferry-trash", ignoring: bookkeeping) == trash.remote, "policy \(policy)")
        #expect(try work.temporaryFiles(in: work.source) == [], "policy \(policy)")
        #expect(try work.temporaryFiles(in: remoteDirectory) == [], "policy \(policy)")

        // The journal: every file in sync, but the conflicts left for a person.
        let status = try await work.ferry(["status", "phone", "--conflicts", "--state", work.state, "--json"])
        let folder = try #require((status.events.first?["folders"] as? [[String: Any]])?.first, "\(status.diagnostics)")
        let statuses = try #require(folder["statuses"] as? [String: [String: Any]])
        let conflicted = policy == "ask" ? SyncMatrix.conflicts.count : 0
        #expect((statuses["inSync"]?["files"] as? NSNumber)?.intValue == expected.count - conflicted, "policy \(policy)")
        #expect((statuses["conflict"]?["files"] as? NSNumber)?.intValue ?? 0 == conflicted, "policy \(policy)")
        #expect(statuses.keys.sorted() == (conflicted > 0 ? ["conflict", "inSync"] : ["inSync"]), "policy \(policy)")
        let problems = (folder["problems"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(problems == (policy == "ask" ? SyncMatrix.conflicts.map(SyncMatrix.file).sorted() : []), "policy \(policy)")

        // Nothing left to do: a third sync changes nothing.
        let third = try await work.ferry(["sync", "phone", "--state", work.state, "--json"])
        #expect(third.status == (policy == "ask" ? 1 : 0), "policy \(policy): \(third.diagnostics)")
        #expect(third.int("uploaded") == 0 && third.int("downloaded") == 0 && third.int("deleted") == 0, "policy \(policy): \(third.diagnostics)")
    }
}
