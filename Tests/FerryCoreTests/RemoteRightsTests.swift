import FerryPluginAPI
import Testing
@testable import FerryCore
@testable import FerryPlanning

/// What a folder without `delete` in `remote_rights` plans (how config.yml states the
/// rights: `RemoteRightsConfigTests`). Pure values, no I/O.
@Suite("Remote rights")
struct RemoteRightsTests {
    typealias P = PlannerTests
    typealias T = TwoWayPlannerTests

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
