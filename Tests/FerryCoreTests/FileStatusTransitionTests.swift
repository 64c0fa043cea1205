import Testing

@testable import FerryCore
@testable import FerryPlanning

/// The status table of DESIGN.md as transitions of a record: each row starts from a status,
/// applies one transition, and names the status, action and attempts it must leave. The
/// transitions in FileRecord.swift are the only code that changes a file's status.
@Suite("file status transitions")
struct FileStatusTransitionTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var from: FileStatus
        var action: FileAction?
        var transition: @Sendable (inout FileRecord) -> Void
        var status: FileStatus
        var actionAfter: FileAction?
        var attemptsAfter: Int

        var testDescription: String { "\(from) —\(name)→ \(status)" }
    }

    static let local = LocalVersion(size: 10, modifiedNanos: 1_000, inode: 7)
    static let remote = RemoteVersion(size: 10, modifiedNanos: 1_000, etag: "\"e\"")

    static let rows: [Row] = [
        Row(name: "plan upload", from: .inSync, action: nil, transition: { $0.plan(.upload) },
            status: .needsUpload, actionAfter: .upload, attemptsAfter: 0),
        Row(name: "plan download", from: .syncError, action: .upload, transition: { $0.plan(.download) },
            status: .needsDownload, actionAfter: .download, attemptsAfter: 0),
        Row(name: "plan remote delete", from: .inSync, action: nil, transition: { $0.plan(.deleteRemote) },
            status: .needsUpload, actionAfter: .deleteRemote, attemptsAfter: 0),
        Row(name: "plan keep-both (local loses)", from: .conflict, action: nil, transition: { $0.plan(.keepBothLocalLoses) },
            status: .needsDownload, actionAfter: .keepBothLocalLoses, attemptsAfter: 0),
        Row(name: "wait for a move", from: .needsUpload, action: .upload, transition: { $0.waitForMove() },
            status: .needsUpload, actionAfter: nil, attemptsAfter: 2),
        Row(name: "confirm in sync", from: .syncError, action: .upload, transition: { $0.confirmInSync() },
            status: .inSync, actionAfter: nil, attemptsAfter: 0),
        Row(name: "adopt", from: .localOnly, action: nil, transition: { $0.adoptInSync(at: 5) },
            status: .inSync, actionAfter: nil, attemptsAfter: 0),
        Row(name: "conflict", from: .needsUpload, action: .upload, transition: { $0.markConflict(reason: "both changed") },
            status: .conflict, actionAfter: nil, attemptsAfter: 2),
        Row(name: "content conflict", from: .inSync, action: nil, transition: { $0.markContentConflict(reason: "bytes differ") },
            status: .conflict, actionAfter: nil, attemptsAfter: 2),
        Row(name: "resolve: keep remote", from: .conflict, action: nil, transition: { $0.resolve(keep: .remote, note: "n", at: 5) },
            status: .needsDownload, actionAfter: .download, attemptsAfter: 2),
        Row(name: "resolve: keep local", from: .conflict, action: nil, transition: { $0.resolve(keep: .local, note: "n", at: 5) },
            status: .needsUpload, actionAfter: .upload, attemptsAfter: 2),
        // No job a run under way could take before planning decides the renames.
        Row(name: "resolve: keep both", from: .conflict, action: nil, transition: { $0.resolve(keep: .keepBoth, note: "n", at: 5) },
            status: .needsUpload, actionAfter: nil, attemptsAfter: 2),
        Row(name: "local only", from: .needsUpload, action: .upload, transition: { $0.keepLocalOnly() },
            status: .localOnly, actionAfter: nil, attemptsAfter: 2),
        Row(name: "begin upload", from: .needsUpload, action: .upload, transition: { $0.beginUpload(of: local, at: 5) },
            status: .uploading, actionAfter: .upload, attemptsAfter: 2),
        Row(name: "begin download", from: .needsDownload, action: .download, transition: { $0.beginDownload(of: remote, at: 5) },
            status: .downloading, actionAfter: .download, attemptsAfter: 2),
        Row(name: "changed while sent", from: .uploading, action: .upload, transition: { $0.changedDuringUpload(to: local) },
            status: .needsUpload, actionAfter: .upload, attemptsAfter: 2),
        Row(name: "retry later", from: .uploading, action: .upload,
            transition: { $0.scheduleRetry(action: .upload, failures: 3, error: "503", notBefore: 9, at: 5) },
            status: .needsUpload, actionAfter: .upload, attemptsAfter: 3),
        Row(name: "retry a download later", from: .downloading, action: .download,
            transition: { $0.scheduleRetry(action: .download, failures: 3, error: "503", notBefore: 9, at: 5) },
            status: .needsDownload, actionAfter: .download, attemptsAfter: 3),
        Row(name: "fail for good", from: .uploading, action: .upload, transition: { $0.failForGood(failures: 3, error: "403", at: 5) },
            status: .syncError, actionAfter: .upload, attemptsAfter: 3),
        Row(name: "hand back", from: .uploading, action: .upload, transition: { $0.handBack(action: .upload, error: "offline", at: 5) },
            status: .needsUpload, actionAfter: .upload, attemptsAfter: 2),
        Row(name: "retry again (ferry retry)", from: .syncError, action: .download, transition: { $0.retryAgain(at: 5) },
            status: .needsDownload, actionAfter: .download, attemptsAfter: 0),
        Row(name: "transferred", from: .uploading, action: .upload, transition: { $0.markInSync(local: local, remote: remote, at: 5) },
            status: .inSync, actionAfter: nil, attemptsAfter: 0),
        Row(name: "evicted by the cache budget", from: .inSync, action: nil, transition: { $0.evictLocally(at: 5) },
            status: .remoteOnly, actionAfter: nil, attemptsAfter: 0),
        Row(name: "still remote only", from: .remoteOnly, action: nil, transition: { $0.keepRemoteOnly() },
            status: .remoteOnly, actionAfter: nil, attemptsAfter: 2),
        Row(name: "fetched on demand", from: .remoteOnly, action: nil, transition: { $0.requestFetch(at: 5) },
            status: .needsDownload, actionAfter: .download, attemptsAfter: 0),
        Row(name: "put back locally, found in sync", from: .remoteOnly, action: nil, transition: { $0.confirmInSync() },
            status: .inSync, actionAfter: nil, attemptsAfter: 0),
        Row(name: "fetched file downloaded", from: .downloading, action: .download,
            transition: { $0.markInSync(local: local, remote: remote, at: 5) },
            status: .inSync, actionAfter: nil, attemptsAfter: 0),
    ]

    @Test("each transition leaves the status, action and attempts of the table", arguments: rows)
    func transition(_ row: Row) {
        var record = FileRecord(pairId: 1, path: "a.jpg", queue: "media", status: row.from, updatedAt: 1)
        record.action = row.action
        record.attempts = 2
        row.transition(&record)
        #expect(record.status == row.status)
        #expect(record.action == row.actionAfter)
        #expect(record.attempts == row.attemptsAfter)
    }

    @Test("a pending status always has an action to carry out, and the status its action waits in")
    func pendingHasAction() {
        for row in Self.rows where row.status.isPending && row.actionAfter != nil {
            let waiting = row.actionAfter!.pendingStatus
            #expect(row.status == waiting || row.status == .uploading || row.status == .downloading, "\(row.name)")
        }
    }

    @Test("eviction drops the local view and keeps the synced versions; a fetch records its time")
    func eviction() {
        var record = FileRecord(pairId: 1, path: "a.jpg", queue: "media", status: .inSync, updatedAt: 1)
        record.markInSync(local: Self.local, remote: Self.remote, at: 2)
        record.evictLocally(at: 3)
        #expect(record.local == nil && record.remote == Self.remote && record.isEvicted)
        #expect(record.syncedLocal == Self.local && record.syncedRemote == Self.remote)
        record.requestFetch(at: 4)
        #expect(record.fetchedAt == 4 && record.isFetchOnDemand && !record.isEvicted)
        record.markInSync(local: Self.local, remote: Self.remote, at: 5)
        #expect(!record.isFetchOnDemand && record.fetchedAt == 4)
        record.evictLocally(at: 6)
        #expect(record.fetchedAt == nil)
    }

    @Test("a failure keeps its message; success and confirmation clear it")
    func errors() {
        var record = FileRecord(pairId: 1, path: "a.jpg", queue: "media", status: .uploading, updatedAt: 1)
        record.scheduleRetry(action: .upload, failures: 1, error: "503 busy", notBefore: 9, at: 5)
        #expect(record.lastError == "503 busy" && record.nextAttemptAt == 9)
        record.markInSync(local: Self.local, remote: Self.remote, at: 6)
        #expect(record.lastError == nil && record.nextAttemptAt == nil && record.syncedLocal == Self.local)
        record.failForGood(failures: 1, error: "403", at: 7)
        record.confirmInSync()
        #expect(record.lastError == nil && record.attempts == 0)
    }
}
