import Testing

@testable import FerryPlanning

/// A paged plan's totals, part by part: what is written at once, what waits for the
/// guards, and what the plan keeps.
@Suite("PlanTally")
struct PlanTallyTests {
    static let version = RemoteVersion(size: 10, modifiedNanos: 1, etag: nil)

    static func job(_ path: String, _ action: FileAction, remote: RemoteVersion? = nil) -> FileRecord {
        var record = FileRecord(pairId: 1, path: path, queue: "media", status: .needsUpload, updatedAt: 0)
        record.action = action
        record.remote = remote
        return record
    }

    static func part(_ jobs: [FileRecord], forgotten: [String] = [], unchanged: Int = 0) -> Plan {
        Plan(changedRecords: jobs, forgottenPaths: forgotten, jobs: jobs, conflicts: [], unchangedCount: unchanged,
             adoptedCount: 0)
    }

    @Test("deletions wait for the guards; every other change is written with its part")
    func deletionsAreHeld() {
        var tally = PlanTally(mode: .push, keeping: .counts)
        let first = tally.add(Self.part([Self.job("a", .upload), Self.job("b", .deleteRemote)], forgotten: ["gone"]))
        #expect(first.written.map(\.path) == ["a"])
        #expect(first.forgotten == ["gone"])
        _ = tally.add(Self.part([Self.job("c", .deleteRemote), Self.job("d", .upload, remote: Self.version)], unchanged: 5))
        #expect(tally.heldDeletions.map(\.path) == ["b", "c"])
        #expect(tally.remoteDeletions == 2)
        #expect(tally.remoteReplacements == 1, "d replaces a remote version")
        #expect(tally.replacementSample.files.map(\.path) == ["d"])
        #expect(tally.plan.unchangedCount == 5)
        #expect(tally.plan.jobs.isEmpty && tally.plan.changedRecords.isEmpty, "counts only: rows and jobs are written")
    }

    @Test("what the plan keeps of its parts", arguments: [
        (PlanTally.Keeping.everything, 2, 1),
        (.jobs, 2, 0),
        (.counts, 0, 0),
    ])
    func keeping(_ keeping: PlanTally.Keeping, jobs: Int, changedRows: Int) {
        var tally = PlanTally(mode: .push, keeping: keeping)
        _ = tally.add(Self.part([Self.job("a", .upload), Self.job("b", .deleteRemote)]))
        #expect(tally.plan.jobs.count == jobs)
        #expect(tally.plan.changedRecords.count == changedRows, "deletions join the rows only after the guards")
    }

    @Test("a refused plan: too many remote deletions for the remote's files")
    func guardRefuses() {
        var tally = PlanTally(mode: .push, keeping: .counts)
        _ = tally.add(Self.part((0..<6).map { Self.job("f\($0)", .deleteRemote) }))
        tally.remoteCount = 10
        #expect(throws: PlanError.self) {
            try tally.checkDeletions(options: PlanOptions(mode: .push, mirror: true))
        }
        #expect(throws: Never.self) {
            try tally.checkDeletions(options: PlanOptions(mode: .push, mirror: true, forceDeletes: true))
        }
    }

    @Test("files the quick check settled count as unchanged on both sides")
    func settled() {
        var tally = PlanTally(mode: .push, keeping: .counts)
        tally.addSettled(7)
        #expect(tally.plan.unchangedCount == 7 && tally.plan.localFileCount == 7 && tally.plan.quickCheckedCount == 7)
        #expect(tally.remoteCount == 7)
    }
}
