@testable import FerryJournal
import FerryPluginAPI
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore
@testable import FerryPlanning

/// One file whose name the two sides spell in different Unicode forms (issue 49): the
/// planner takes it for one file (Swift compares the forms as equal) and keeps the remote's
/// spelling on the row, so that every request to the remote names the remote's own file.
@Suite("a name spelled in another Unicode form on the remote")
struct RemoteSpellingPlanningTests {
    static let nfc = "DCIM/caf\u{E9}.jpg"
    static let nfd = "DCIM/cafe\u{301}.jpg"
    typealias P = PlannerTests

    static func plan(_ records: [FileRecord], remote: [String: RemoteVersion], _ options: PlanOptions,
                     order: [String]? = nil) -> Plan {
        var byPath: [String: FileRecord] = [:]
        for record in records { byPath[record.path] = record }
        return Planner.planPart(pairId: 1, records: byPath, remote: remote, options: options,
                                classifier: P.classifier, now: P.now, order: order)
    }

    static func bytes(_ text: String?) -> [UInt8]? { text.map { Array($0.utf8) } }

    @Test("a local NFC file against a remote NFD one of other bytes: the push replaces the remote's NFD file")
    func pushNamesTheRemoteSpelling() {
        let row = P.record(Self.nfc, local: P.local(1000))
        let plan = Self.plan([row], remote: [Self.nfd: P.remote(2000)], P.push)
        #expect(plan.jobs.count == 1)
        let job = plan.jobs[0]
        #expect(job.action == .upload)
        #expect(Self.bytes(job.path) == Self.bytes(Self.nfc), "the row keeps the local spelling")
        #expect(Self.bytes(job.remoteSpelling) == Self.bytes(Self.nfd))
    }

    @Test("a synced NFC row whose remote is now the NFD spelling with other bytes: the pull downloads it, naming the NFD file")
    func pullNamesTheRemoteSpelling() {
        let row = P.record(Self.nfc, status: .inSync, local: P.local(1000), remote: P.remote(1000),
                           syncedLocal: P.local(1000), syncedRemote: P.remote(1000))
        let plan = Self.plan([row], remote: [Self.nfd: P.remote(2000, P.t0 + P.second)], P.pull)
        #expect(plan.jobs.map(\.action) == [.download], "\(plan.jobs)")
        #expect(plan.unchangedCount == 0)
        #expect(Self.bytes(plan.jobs.first?.remoteSpelling) == Self.bytes(Self.nfd))
        #expect(Self.bytes(plan.jobs.first?.path) == Self.bytes(Self.nfc))
    }

    @Test("a row in sync learns the remote's spelling even when nothing else changed (a journal written before it was kept)")
    func inSyncRowLearnsTheSpelling() {
        let row = P.synced(Self.nfc, size: 1000)
        let plan = Self.plan([row], remote: [Self.nfd: P.remote(1000)], P.push)
        #expect(plan.jobs.isEmpty && plan.unchangedCount == 1)
        #expect(plan.changedRecords.map { Self.bytes($0.remoteSpelling) } == [Self.bytes(Self.nfd)])
        // Planned again with the spelling known: nothing to write.
        let again = Self.plan(plan.changedRecords, remote: [Self.nfd: P.remote(1000)], P.push)
        #expect(again.changedRecords.isEmpty && again.unchangedCount == 1)
    }

    @Test("the same bytes on both sides keep no spelling; a spelling that no longer holds is dropped")
    func sameBytesKeepNone() {
        let plan = Self.plan([P.record(Self.nfc, local: P.local(1000))], remote: [Self.nfc: P.remote(2000)], P.push)
        #expect(plan.jobs.count == 1 && plan.jobs[0].remoteSpelling == nil)

        var spelled = P.synced(Self.nfc, size: 1000)
        spelled.remoteSpelling = Self.nfd
        // The remote file is NFC again (renamed there): requests go to the NFC name.
        let renamed = Self.plan([spelled], remote: [Self.nfc: P.remote(1000)], P.push)
        #expect(renamed.changedRecords.count == 1 && renamed.changedRecords[0].remoteSpelling == nil)
        // The remote file is gone: an upload makes it under the local spelling.
        var changed = spelled
        changed.local = P.local(3000)
        let gone = Self.plan([changed], remote: [:], P.push)
        #expect(gone.jobs.count == 1 && gone.jobs[0].action == .upload && gone.jobs[0].remoteSpelling == nil)
    }

    @Test("a file only on the remote is named as the remote spells it, and keeps no separate spelling")
    func remoteOnlyFile() {
        let plan = Self.plan([], remote: [Self.nfd: P.remote(2000)], P.pull)
        #expect(plan.jobs.count == 1)
        #expect(Self.bytes(plan.jobs.first?.path) == Self.bytes(Self.nfd))
        #expect(plan.jobs.first?.remoteSpelling == nil)
    }

    @Test("a push between listings (the remote side read from the journal) keeps the remote's spelling")
    func journalRemoteSideKeepsTheSpelling() async throws {
        let folder = TemporaryDirectory()
        let journal = try await StateFolder(directory: folder.path).journal()
        let pair = try await journal.folderPair(name: "p", localRoot: "/l", remoteLocation: "r", at: 0)
        let pairId = try #require(pair.id)
        var row = P.synced(Self.nfc, size: 1000)
        row.pairId = pairId
        row.remoteSpelling = Self.nfd
        try await journal.applyPlan([row])
        #expect(Self.bytes(try await journal.record(pairId: pairId, path: Self.nfc)?.remoteSpelling) == Self.bytes(Self.nfd))

        // The local file changed; the remote is known from the journal only.
        let scan = [LocalEntry(path: try RelativePath(Self.nfc), version: P.local(3000, P.t0 + P.second))]
        let planning = PagedPlanning(journal: journal, pairId: pairId, options: P.push, classifier: P.classifier,
                                     now: P.now, writesChanges: true)
        _ = try await planning.plan(local: LocalScanStream(scan: ScanResult(entries: scan, notes: [])), remote: .journal)
        let planned = try #require(try await journal.record(pairId: pairId, path: Self.nfc))
        #expect(planned.action == .upload)
        #expect(Self.bytes(planned.remoteSpelling) == Self.bytes(Self.nfd))
    }
}

extension RemoteSpellingPlanningTests {
    @Test("names that sort between the two spellings (a conflict copy) do not make the file planned twice")
    func spellingsApartInPathOrder() {
        // By bytes: cafe\u{301}.jpg < caf\u{E9}.conflict….jpg < caf\u{E9}.jpg.
        let between = "DCIM/caf\u{E9}.conflict-20260101-000000-host.jpg"
        let rows = [P.synced(between, size: 500), P.synced(Self.nfc, size: 1000)]
        let remote = [Self.nfd: P.remote(1000), between: P.remote(500)]
        let order = SortedPathUnion.of([rows.map(\.path), rows.map(\.path), [Self.nfd, between]])
        #expect(order.map { Array($0.utf8) } == [Array(Self.nfd.utf8), Array(between.utf8)])
        let plan = Self.plan(rows, remote: remote, P.pull, order: order)
        #expect(plan.jobs.isEmpty && plan.unchangedCount == 2 && plan.localFileCount == 2, "\(plan.jobs)")
        #expect(plan.changedRecords.map { Self.bytes($0.path) } == [Self.bytes(Self.nfc)])
    }
}
