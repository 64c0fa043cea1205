import FerryConfig
import FerryPluginAPI
import Testing
@testable import FerryCore
@testable import FerryPlanning

/// `remote_rights`, `keep_versions`, `keep_days`: how config.yml states them, and what a
/// folder without `delete` plans. Pure values, no I/O.
@Suite("Remote rights")
struct RemoteRightsTests {
    typealias P = PlannerTests
    typealias T = TwoWayPlannerTests

    static func folderYAML(_ extra: String, mode: String = "push") -> String {
        "remotes:\n  r: {type: local, path: /r}\nfolders:\n  f:\n    path: /f\n    remote: r\n    mode: \(mode)\n" + extra
    }

    // MARK: Config

    @Test("remote_rights defaults to all three; a list of fewer is read as given")
    func readsRights() throws {
        let standard = try ConfigLoaderTests.parse(Self.folderYAML(""))
        #expect(standard.folders[0].rights == .all)
        let appendOnly = try ConfigLoaderTests.parse(Self.folderYAML("    remote_rights: [read, write]\n"))
        #expect(appendOnly.folders[0].rights == RemoteRights(rights: [.read, .write]))
        #expect(appendOnly.folders[0].rights.keepsEveryVersion)
        let pruned = try ConfigLoaderTests.parse(Self.folderYAML("    keep_versions: 10\n    keep_days: 90\n"))
        #expect(pruned.folders[0].retention == VersionRetention(keepVersions: 10, keepDays: 90))
    }

    static let errorCases: [ConfigErrorCase] = [
        ConfigErrorCase(name: "a misspelt right", yaml: folderYAML("    remote_rights: [read, wirte]\n"),
                        line: 8, column: 27, mentions: "did you mean 'write'?", key: "folders.f.remote_rights"),
        ConfigErrorCase(name: "an unknown right", yaml: folderYAML("    remote_rights: [read, append]\n"),
                        line: 8, column: 27, mentions: "unknown right 'append' (expected read, write or delete)",
                        key: "folders.f.remote_rights"),
        ConfigErrorCase(name: "a right twice", yaml: folderYAML("    remote_rights: [read, read]\n"),
                        line: 8, column: 27, mentions: "listed twice", key: "folders.f.remote_rights"),
        ConfigErrorCase(name: "rights without read", yaml: folderYAML("    remote_rights: [write]\n"),
                        line: 8, column: 20, mentions: "must include read", key: "folders.f.remote_rights"),
        ConfigErrorCase(name: "a push folder without write", yaml: folderYAML("    remote_rights: [read]\n"),
                        line: 8, column: 20, mentions: "add write, or set mode: pull", key: "folders.f.remote_rights"),
        ConfigErrorCase(name: "a mapping for rights", yaml: folderYAML("    remote_rights: {read: true}\n"),
                        line: 8, column: 20, mentions: "expected a list of rights", key: "folders.f.remote_rights"),
        ConfigErrorCase(name: "retention without delete",
                        yaml: folderYAML("    remote_rights: [read, write]\n    keep_versions: 10\n"),
                        line: 9, column: 5, mentions: "needs delete in remote_rights", key: "folders.f.keep_versions"),
        ConfigErrorCase(name: "keep_days of zero", yaml: folderYAML("    keep_days: 0\n"),
                        line: 8, column: 16, mentions: "out of range", key: "folders.f.keep_days"),
    ]

    @Test("each bad rights or retention value is reported at its line and column", arguments: errorCases)
    func errorLocation(_ row: ConfigErrorCase) throws {
        try ConfigLoaderTests().errorLocation(row)
    }

    @Test("a pull folder may go without write")
    func pullWithoutWrite() throws {
        let config = try ConfigLoaderTests.parse(Self.folderYAML("    remote_rights: [read]\n", mode: "pull"))
        #expect(!config.folders[0].rights.mayWrite)
    }

    // MARK: Planning without delete

    static let pushMirrorNoDelete: PlanOptions = {
        var options = PlanOptions(mode: .push, mirror: true, forceDeletes: true)
        options.mayDeleteRemote = false
        return options
    }()

    static func syncNoDelete(_ policy: ConflictPolicy = .keepBoth) -> PlanOptions {
        var options = T.options(policy)
        options.mayDeleteRemote = false
        return options
    }

    @Test("push --delete without delete: a file gone locally is left on the remote and forgotten")
    func pushMirrorKeepsRemote() throws {
        let gone = P.record("a.jpg", status: .inSync, remote: P.remote(100), syncedLocal: P.local(100), syncedRemote: P.remote(100))
        let plan = try P.plan([gone], remote: [try P.entry("a.jpg", P.remote(100))], Self.pushMirrorNoDelete)
        #expect(plan.jobs.isEmpty)
        #expect(plan.forgottenPaths == ["a.jpg"])
    }

    @Test("sync without delete: a local deletion keeps the remote copy remote-only, and it stays so")
    func syncLocalDeletionStaysRemote() throws {
        let input = T.record("a.jpg", local: .deleted, remote: .unchanged)
        let plan = try T.plan(input, Self.syncNoDelete())
        #expect(plan.jobs.isEmpty)
        let kept = try #require(plan.changedRecords.first)
        #expect(kept.status == .remoteOnly)
        #expect(kept.isEvicted)
        // The next sync: still not downloaded, still not deleted.
        let again = try T.plan(kept, Self.syncNoDelete())
        #expect(again.jobs.isEmpty)
        // A newer version written on the remote stays remote-only too.
        var changed = kept
        changed.remote = P.remote(300, P.t0 + 9 * P.second)
        #expect(try T.plan(changed, Self.syncNoDelete()).jobs.isEmpty)
    }

    @Test("sync with delete still deletes the remote copy of a file deleted locally")
    func syncWithDeleteDeletes() throws {
        let input = T.record("a.jpg", local: .deleted, remote: .unchanged)
        #expect(try T.plan(input, T.options()).jobs.map(\.action) == [.deleteRemote])
    }

    @Test("sync without delete: a conflict kept both ways renames the local copy, never the remote one",
          arguments: [ConflictPolicy.keepBoth, .newer])
    func keepBothRenamesLocal(_ policy: ConflictPolicy) throws {
        // The local copy is newer, so the remote one would be the loser.
        let input = T.record("a.jpg", local: .changed, remote: .changed,
                             localTime: P.t0 + 20 * P.second, remoteTime: P.t0 + 9 * P.second)
        let plan = try T.plan(input, Self.syncNoDelete(policy))
        #expect(!plan.jobs.contains { $0.action == .keepBothRemoteLoses || $0.action == .deleteRemote })
    }

    @Test("a changed file is still uploaded without delete (the executor saves the old version first)")
    func changedFileUploads() throws {
        let input = T.record("a.jpg", local: .changed, remote: .unchanged)
        let plan = try T.plan(input, Self.syncNoDelete())
        #expect(plan.jobs.map(\.action) == [.upload])
    }
}
