import FerryPluginAPI
import Testing
@testable import FerryCore
@testable import FerryPlanning

/// How the planner treats files the cache budget evicted (`remoteOnly`) and files asked for
/// on demand: never fetched again by themselves, never a local deletion, fetched when asked.
@Suite("Planner: evicted files")
struct EvictedFilePlanningTests {
    typealias P = PlannerTests

    /// A file synced at size 100, then evicted.
    static func evicted(_ path: String = "a.jpg") -> FileRecord {
        var record = P.synced(path)
        record.evictLocally(at: P.earlier)
        return record
    }

    static let sync = PlanOptions(mode: .sync, forceDeletes: true,
                                  sync: SyncPlanSettings(host: "laptop", stamp: "20261122-120000"))
    static let modes: [(String, PlanOptions)] = [("pull", P.pull), ("pull --delete", P.pullMirror), ("sync", sync)]

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        /// The remote's version now (nil: gone from the remote).
        var remote: RemoteVersion?
        /// The file put back locally by someone (nil: still evicted).
        var local: LocalVersion?
        var asked = false
        var action: FileAction?
        var status: FileStatus?
        var forgotten = false

        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "unchanged on the remote: stays remote only, no job", remote: P.remote(100), status: .remoteOnly),
        Case(name: "changed on the remote: stays remote only (not fetched by itself)", remote: P.remote(300, P.t0 + 9 * P.second),
             status: .remoteOnly),
        Case(name: "gone from the remote: forgotten, nothing deleted", remote: nil, forgotten: true),
        Case(name: "put back locally as it was: in sync again", remote: P.remote(100), local: P.local(100), status: .inSync),
        Case(name: "asked for on demand: downloaded", remote: P.remote(100), asked: true, action: .download, status: .needsDownload),
        Case(name: "asked for on demand, changed on the remote: the new version downloaded", remote: P.remote(300, P.t0 + 9 * P.second),
             asked: true, action: .download, status: .needsDownload),
    ]

    @Test("an evicted file in every mode", arguments: cases, [0, 1, 2])
    func evictedFile(_ row: Case, mode index: Int) throws {
        let (_, options) = Self.modes[index]
        var record = Self.evicted()
        if row.asked { record.requestFetch(at: P.earlier) }
        record.local = row.local
        let plan = try P.plan([record], remote: row.remote.map { [try P.entry("a.jpg", $0)] } ?? [], options)
        // Never a deletion on either side: an evicted file is not a local deletion.
        #expect(!plan.jobs.contains { $0.action == .deleteRemote || $0.action == .deleteLocal })
        #expect(plan.jobs.first?.action == row.action, "\(plan.jobs.map { $0.action as Any })")
        if row.forgotten {
            #expect(plan.forgottenPaths == ["a.jpg"])
        } else {
            let after = plan.changedRecords.first { $0.path == "a.jpg" } ?? record
            #expect(after.status == row.status)
        }
    }

    @Test("a file deleted locally while in sync is still a deletion for a sync: eviction is not")
    func realDeletionStillCounts() throws {
        var deleted = P.synced("b.jpg")
        deleted.local = nil
        let plan = try P.plan([deleted, Self.evicted()],
                              remote: [try P.entry("a.jpg", P.remote(100)), try P.entry("b.jpg", P.remote(100))], Self.sync)
        #expect(plan.jobs.map(\.path) == ["b.jpg"] && plan.jobs.first?.action == .deleteRemote)
    }
}
