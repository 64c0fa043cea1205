@testable import FerryJournal
import FerryPluginAPI
import FerryTestSupport
import Testing
@testable import FerryCore
@testable import FerryPlanning

/// The two-way sync's decisions over every combination of what happened on each side,
/// with every conflict policy: pure values, no I/O.
@Suite("Planner: two-way sync")
struct TwoWayPlannerTests {
    typealias P = PlannerTests

    static let settings = SyncPlanSettings(host: "laptop", stamp: "20261122-120000")

    /// Single-file plans pass `force` (deleting one file of one is over any share).
    static func options(_ policy: ConflictPolicy = .keepBoth, trash: Bool = true, force: Bool = true) -> PlanOptions {
        var sync = settings
        sync.conflicts = ConflictPolicies(folder: .init(fallback: policy))
        sync.usesTrash = trash
        return PlanOptions(mode: .sync, forceDeletes: force, sync: sync)
    }

    /// The versions of a file from what happened to each side since a last sync at size 100,
    /// time t0 (or no last sync, for created/absent).
    static func record(_ path: String, local: SideChange, remote: SideChange,
                       localTime: Int64 = P.t0 + 5 * P.second, remoteTime: Int64 = P.t0 + 9 * P.second) -> FileRecord {
        let hasBase = [local, remote].contains { [.unchanged, .changed, .deleted].contains($0) }
        func localVersion(_ change: SideChange) -> LocalVersion? {
            switch change {
            case .absent, .deleted: return nil
            case .unchanged: return P.local(100)
            case .changed, .created: return P.local(200, localTime)
            }
        }
        func remoteVersion(_ change: SideChange) -> RemoteVersion? {
            switch change {
            case .absent, .deleted: return nil
            case .unchanged: return P.remote(100)
            case .changed, .created: return P.remote(300, remoteTime)
            }
        }
        return P.record(path, status: hasBase ? .inSync : .localOnly, local: localVersion(local), remote: remoteVersion(remote),
                        syncedLocal: hasBase ? P.local(100) : nil, syncedRemote: hasBase ? P.remote(100) : nil)
    }

    static func plan(_ input: FileRecord, _ options: PlanOptions) throws -> Plan {
        try P.plan([input], remote: input.remote.map { [try P.entry(input.path, $0)] } ?? [], options)
    }

    /// Every combination a path can be in: with a last sync, each side unchanged, changed
    /// or deleted; without one, each side created or absent.
    static let combinations: [(SideChange, SideChange)] = {
        let synced: [SideChange] = [.unchanged, .changed, .deleted]
        let fresh: [SideChange] = [.created, .absent]
        return synced.flatMap { l in synced.map { (l, $0) } } + fresh.flatMap { l in fresh.map { (l, $0) } }
    }()

    /// What each combination must become, for combinations that are not conflicts.
    static func expected(_ local: SideChange, _ remote: SideChange) -> FileAction?? {
        switch (local, remote) {
        case (.unchanged, .unchanged): return .some(nil)
        case (.changed, .unchanged), (.changed, .deleted), (.created, .absent): return .upload
        case (.unchanged, .changed), (.deleted, .changed), (.absent, .created): return .download
        case (.unchanged, .deleted): return .deleteLocal
        case (.deleted, .unchanged): return .deleteRemote
        default: return nil
        }
    }

    @Test("the side changes are read from the journal's last sync", arguments: combinations)
    func sideChanges(_ local: SideChange, _ remote: SideChange) {
        let input = Self.record("a.jpg", local: local, remote: remote)
        #expect(SideChange.local(of: input) == local)
        #expect(SideChange.remote(of: input) == remote)
    }

    @Test("every non-conflict combination, with every policy, gives the same job",
          arguments: combinations.filter { expected($0.0, $0.1) != nil }, ConflictPolicy.allCases)
    func nonConflicts(_ sides: (SideChange, SideChange), _ policy: ConflictPolicy) throws {
        let input = Self.record("DCIM/a.jpg", local: sides.0, remote: sides.1)
        let plan = try Self.plan(input, Self.options(policy))
        let wanted = try #require(Self.expected(sides.0, sides.1))
        #expect(plan.conflicts.isEmpty)
        if let wanted {
            let job = try #require(plan.jobs.first)
            #expect(plan.jobs.count == 1)
            #expect(job.action == wanted)
            #expect(job.status == wanted.pendingStatus)
        } else {
            #expect(plan.jobs.isEmpty)
            #expect(plan.unchangedCount == 1)
        }
    }

    @Test("deleted on both sides, or on neither side at all: the row is forgotten")
    func forgotten() throws {
        let input = Self.record("a.jpg", local: .deleted, remote: .deleted)
        let plan = try Self.plan(input, Self.options())
        #expect(plan.jobs.isEmpty && plan.conflicts.isEmpty)
        #expect(plan.forgottenPaths == ["a.jpg"])
    }

    static let conflicting: [(SideChange, SideChange)] = [(.changed, .changed), (.created, .created)]

    @Test("changed on both sides, per policy (remote newer)", arguments: conflicting, ConflictPolicy.allCases)
    func conflictsRemoteNewer(_ sides: (SideChange, SideChange), _ policy: ConflictPolicy) throws {
        let input = Self.record("DCIM/IMG_1.jpg", local: sides.0, remote: sides.1)
        let plan = try Self.plan(input, Self.options(policy))
        switch policy {
        case .ask:
            let conflict = try #require(plan.conflicts.first)
            #expect(plan.jobs.isEmpty)
            #expect(conflict.status == .conflict)
            #expect(conflict.lastError?.contains("ferry resolve DCIM/IMG_1.jpg") == true)
        case .local:
            #expect(plan.jobs.map(\.action) == [.upload])
        case .remote, .newer:
            #expect(plan.jobs.map(\.action) == [.download])
        case .keepBoth:
            let job = try #require(plan.jobs.first)
            #expect(job.action == .keepBothLocalLoses)
            #expect(job.status == .needsDownload)
            #expect(job.moveTarget == "DCIM/IMG_1.conflict-20261122-120000-laptop.jpg")
        }
    }

    @Test("keep-both and newer when the local side is newer: the remote version loses")
    func localNewer() throws {
        let input = Self.record("IMG_1.jpg", local: .changed, remote: .changed,
                                localTime: P.t0 + 20 * P.second, remoteTime: P.t0 + 9 * P.second)
        let keepBoth = try Self.plan(input, Self.options(.keepBoth))
        #expect(keepBoth.jobs.map(\.action) == [.keepBothRemoteLoses])
        #expect(keepBoth.jobs.first?.status == .needsUpload)
        let newer = try Self.plan(input, Self.options(.newer))
        #expect(newer.jobs.map(\.action) == [.upload])
    }

    @Test("newer: equal times (at the coarser side's whole seconds) keep both")
    func newerTie() throws {
        let input = Self.record("IMG_1.jpg", local: .changed, remote: .changed,
                                localTime: P.t0 + 9 * P.second + 400_000_000, remoteTime: P.t0 + 9 * P.second)
        let plan = try Self.plan(input, Self.options(.newer))
        #expect(plan.jobs.map(\.action) == [.keepBothLocalLoses])
    }

    @Test("both sides changed to the same size and time are compared by content first, whatever the policy",
          arguments: ConflictPolicy.allCases)
    func sameChangeCompared(_ policy: ConflictPolicy) throws {
        var input = Self.record("a.jpg", local: .changed, remote: .changed)
        input.remote = P.remote(200, P.t0 + 5 * P.second)
        let plan = try Self.plan(input, Self.options(policy))
        #expect(plan.jobs.map(\.action) == [.compareContent])
        #expect(plan.conflicts.isEmpty && plan.adoptedCount == 0)
    }

    @Test("look-alike copies found different go to the policy; ask leaves a conflict that says why and is not compared again",
          arguments: ConflictPolicy.allCases)
    func differentLookAlikesGoToThePolicy(_ policy: ConflictPolicy) throws {
        var input = Self.record("a.jpg", local: .changed, remote: .changed)
        input.remote = P.remote(200, P.t0 + 5 * P.second)
        let decision = Planner.decideDiffering(input, options: Self.options(policy), reason: nil)
        switch policy {
        case .ask:
            guard case let .conflict(reason) = decision else { Issue.record("\(decision)"); return }
            #expect(reason.hasPrefix(Planner.contentDiffersNote))
            input.markConflict(reason: reason)
            let again = try Self.plan(input, Self.options(policy))
            #expect(again.jobs.isEmpty && again.conflicts.count == 1, "compared again: \(again.jobs)")
        case .local: #expect(decision == .transfer(.upload))
        case .remote: #expect(decision == .transfer(.download))
        case .keepBoth, .newer:
            // Equal times: newer cannot choose and keeps both, like keep-both.
            if case .move = decision {} else { Issue.record("expected a keep-both rename, got \(decision)") }
        }
    }

    @Test("a person's answer to a conflict overrides the policy", arguments: [
        (ConflictPolicy.local, FileAction.upload), (.remote, .download), (.keepBoth, .keepBothLocalLoses),
    ])
    func resolution(_ answer: ConflictPolicy, _ action: FileAction) throws {
        var input = Self.record("a.jpg", local: .changed, remote: .changed)
        input.markConflict(reason: "both changed")
        input.resolution = answer
        let plan = try Self.plan(input, Self.options(.ask))
        #expect(plan.jobs.map(\.action) == [action])
    }

    @Test("the folder's per-queue policy comes first, then its default, then the queue's, then keep-both")
    func policyOrder() {
        let rules = [QueueRule(name: "thumbnails", match: [], concurrency: 1, conflict: .remote),
                     QueueRule(name: "media", match: [], concurrency: 1)]
        #expect(ConflictPolicies(folder: .init(), rules: rules).policy(forQueue: "thumbnails") == .remote)
        #expect(ConflictPolicies(folder: .init(), rules: rules).policy(forQueue: "media") == .keepBoth)
        #expect(ConflictPolicies(folder: .init(fallback: .ask), rules: rules).policy(forQueue: "thumbnails") == .ask)
        #expect(ConflictPolicies(folder: .init(fallback: .ask, perQueue: ["thumbnails": .newer]), rules: rules)
            .policy(forQueue: "thumbnails") == .newer)
    }

    @Test("jobs that delete or overwrite get a trash place; with the trash off, none")
    func trashTargets() throws {
        let cases: [(SideChange, SideChange, String?)] = [
            (.deleted, .unchanged, "20261122-120000/a.jpg"), (.unchanged, .deleted, "20261122-120000/a.jpg"),
            (.changed, .unchanged, "20261122-120000/a.jpg"), (.unchanged, .changed, "20261122-120000/a.jpg"),
            (.created, .absent, nil), (.absent, .created, nil), (.changed, .deleted, nil), (.deleted, .changed, nil),
        ]
        for (local, remote, target) in cases {
            let input = Self.record("a.jpg", local: local, remote: remote)
            #expect(try Self.plan(input, Self.options()).jobs.first?.moveTarget == target, "\(local) × \(remote)")
            #expect(try Self.plan(input, Self.options(trash: false)).jobs.first?.moveTarget == nil)
        }
    }

    @Test("the guard checks each side on its own: 3 of 4 remote files deleted is refused")
    func guardPerSide() throws {
        var records = (0..<3).map { Self.record("gone\($0).jpg", local: .deleted, remote: .unchanged) }
        records.append(P.synced("kept.jpg"))
        let remote = try records.compactMap { record in try record.remote.map { try P.entry(record.path, $0) } }
        #expect(throws: PlanError.self) { try P.plan(records, remote: remote, Self.options(force: false)) }
        #expect(try P.plan(records, remote: remote, Self.options(force: true)).deletionCount == 3)
        // Two of four on each side is within 50%.
        let balanced = [Self.record("l.jpg", local: .unchanged, remote: .deleted), Self.record("r.jpg", local: .deleted, remote: .unchanged),
                        P.synced("a.jpg"), P.synced("b.jpg"), P.synced("c.jpg")]
        let balancedRemote = try balanced.compactMap { record in try record.remote.map { try P.entry(record.path, $0) } }
        #expect(try P.plan(balanced, remote: balancedRemote, Self.options(force: false)).deletionCount == 2)
    }

    @Test("a resumed keep-both job keeps its conflict name from the earlier run")
    func resumedJobKeepsTarget() throws {
        var input = Self.record("a.jpg", local: .changed, remote: .changed)
        input.plan(.keepBothLocalLoses)
        input.moveTarget = "a.conflict-20261101-000000-laptop.jpg"
        let plan = try Self.plan(input, Self.options())
        #expect(plan.jobs.first?.moveTarget == "a.conflict-20261101-000000-laptop.jpg")
    }

    @Test("conflict names", arguments: [
        ("IMG_1.jpg", "IMG_1.conflict-20261122-120000-laptop.jpg"),
        ("DCIM/a.tar.gz", "DCIM/a.tar.conflict-20261122-120000-laptop.gz"),
        ("notes", "notes.conflict-20261122-120000-laptop"),
        (".hidden", ".hidden.conflict-20261122-120000-laptop"),
        ("dir/.x.xmp", "dir/.x.conflict-20261122-120000-laptop.xmp"),
    ])
    func conflictNames(_ path: String, _ expected: String) {
        #expect(Self.settings.conflictPath(for: path) == expected)
    }

    @Test("host names are sanitised for file names", arguments: [
        ("laptop.example.org", "laptop"), ("my host/1", "my-host-1"), ("", "host"), ("///", "host"), ("Büro-PC", "B-ro-PC"),
    ])
    func hostNames(_ raw: String, _ expected: String) {
        #expect(SyncPlanSettings.sanitisedHost(raw) == expected)
    }
}

@Suite("RenameDetection")
struct RenameDetectionTests {
    typealias P = PlannerTests

    static func vanished(_ path: String, inode: Int64, size: Int64 = 100) -> FileRecord {
        var record = P.record(path, status: .needsUpload, remote: P.remote(size),
                              syncedLocal: P.local(size, inode: inode), syncedRemote: P.remote(size))
        record.action = .deleteRemote
        return record
    }

    static func appeared(_ path: String, inode: Int64, size: Int64 = 100) -> FileRecord {
        var record = P.record(path, status: .needsUpload, local: P.local(size, inode: inode))
        record.action = .upload
        return record
    }

    @Test("a vanished file and a new one with its size, time and inode are a rename, done as one MOVE")
    func detected() {
        let jobs = [Self.vanished("old/IMG_1.jpg", inode: 42), Self.appeared("new/IMG_1.jpg", inode: 42),
                    Self.appeared("other.jpg", inode: 43)]
        let renames = RenameDetection.renames(in: jobs)
        #expect(renames.map(\.to) == ["new/IMG_1.jpg"])
        let applied = RenameDetection.applying(renames, to: jobs)
        #expect(applied.map(\.path) == ["old/IMG_1.jpg", "other.jpg"])
        #expect(applied[0].action == .moveRemote)
        #expect(applied[0].moveTarget == "new/IMG_1.jpg")
    }

    @Test("different inode, size, or an ambiguous match: no rename")
    func notDetected() {
        #expect(RenameDetection.renames(in: [Self.vanished("a", inode: 1), Self.appeared("b", inode: 2)]).isEmpty)
        #expect(RenameDetection.renames(in: [Self.vanished("a", inode: 1), Self.appeared("b", inode: 1, size: 101)]).isEmpty)
        #expect(RenameDetection.renames(in: [Self.vanished("a", inode: 1), Self.appeared("b", inode: 1),
                                             Self.appeared("c", inode: 1)]).isEmpty)
    }

    @Test("paged planning turns a rename across pages into one MOVE job", arguments: [1, 2, 1000])
    func pagedRename(pageSize: Int) async throws {
        let folder = TemporaryDirectory("ferry-rename")
        let journal = try await StateFolder(directory: folder.path).journal()
        let pair = try await journal.folderPair(name: "t", localRoot: "/l", remoteLocation: "r", at: 0)
        let pairId = try #require(pair.id)
        var old = P.synced("a/old.jpg")
        old.pairId = pairId
        old.local = P.local(100, inode: 9)
        old.syncedLocal = P.local(100, inode: 9)
        var other = P.synced("m.jpg")
        other.pairId = pairId
        try await journal.applyPlan([old, other])
        let scan = ScanResult(entries: [
            LocalEntry(path: try RelativePath("z/new.jpg"), version: P.local(100, inode: 9)),
            LocalEntry(path: try RelativePath("m.jpg"), version: P.local(100)),
        ], notes: [])
        let remote = ["a/old.jpg": try P.entry("a/old.jpg", P.remote(100)), "m.jpg": try P.entry("m.jpg", P.remote(100))]
        // A dry run keeps its jobs; a written plan leaves them in the journal for the engine.
        let dryRun = try await PagedPlanning(journal: journal, pairId: pairId, options: TwoWayPlannerTests.options(),
                                             classifier: P.classifier, now: P.now, writesChanges: false, pageSize: pageSize)
            .plan(scan: scan, remote: remote)
        #expect(dryRun.jobs.map(\.action) == [.moveRemote])
        #expect(dryRun.jobs.first?.moveTarget == "z/new.jpg")

        _ = try await PagedPlanning(journal: journal, pairId: pairId, options: TwoWayPlannerTests.options(),
                                    classifier: P.classifier, now: P.now, writesChanges: true, pageSize: pageSize)
            .plan(scan: scan, remote: remote)
        let move = try await journal.record(pairId: pairId, path: "a/old.jpg")
        #expect(move?.action == .moveRemote && move?.moveTarget == "z/new.jpg")
        // The new name has no upload job of its own: the MOVE brings it.
        let target = try await journal.record(pairId: pairId, path: "z/new.jpg")
        #expect(target?.action == nil && target?.status == .needsUpload)
        let queued = try await journal.pendingJobTotals(pairId: pairId).reduce(0) { $0 + $1.files }
        #expect(queued == 1)
    }
}
