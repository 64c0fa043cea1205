import ArchiveCodec
import FerryConfig
import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

/// `ferry verify`: checks a folder pair's two sides against the journal. By metadata
/// (sizes, ETags, modification times) always; with `hashes`, also by content, reading
/// both sides of every file the journal has in sync (the remote copy is downloaded to a
/// temporary file and removed). With `repair`, the journal is corrected (`Verification.repaired`).
public struct VerifyRun: Sendable {
    public struct Report: Sendable {
        public var folder: String
        public var checkedFiles: Int
        public var hashedFiles: Int
        public var findings: [VerificationFinding]
        public var repairedRows: Int
        public var removedRows: Int
    }

    public let pair: FolderPair
    public let config: Config
    public let state: StateFolder
    var stateDirectory: String { state.directory }
    public var hashes: Bool
    public var repair: Bool
    /// Stamps the rows a repair writes.
    public let clock: any FerryClock

    public init(pair: FolderPair, config: Config, state: StateFolder, hashes: Bool, repair: Bool, clock: any FerryClock) {
        self.clock = clock
        self.pair = pair
        self.config = config
        self.state = state
        self.hashes = hashes
        self.repair = repair
    }

    public func run() async throws(RunError) -> Report {
        let journalPath = state.journalPath
        do {
            guard let journal = try await state.existingJournal(),
                  let pairRecord = try await journal.findFolderPair(localRoot: pair.localRoot, remoteLocation: pair.remoteLocation),
                  let pairId = pairRecord.id else {
                throw RunError("\(pair.name) has never been synced (nothing in the journal at \(journalPath)); nothing to verify")
            }
            let lock = repair ? try RunLock.acquire(stateDirectory: stateDirectory, pairId: pairId) : nil
            defer { withExtendedLifetime(lock) {} }

            let ignore = try PairIgnores.globSet(pair: pair, config: config, stateDirectory: stateDirectory)
            let scan = try await LocalScanner(root: pair.localRoot, ignore: ignore, followSymlinks: config.scan.followSymlinks).scan()
            var local: [String: LocalVersion] = [:]
            for entry in scan.entries { local[entry.path.string] = entry.version }
            let records = try await journal.records(pairId: pairId)
            let hints = PairRun.hiddenFolders(in: records.map(\.path), below: pair.remoteRoot)
            let listing = try await pair.backend.listTree(pair.remoteRoot, hints: hints, bounds: config.listingBounds)
            var remote = PairRun.remoteContent(of: listing, pair: pair, ignore: ignore).files.mapValues { entry in
                RemoteVersion(entry)
            }
            try await addUnlistedHiddenFiles(to: &remote, journal: journal, pairId: pairId)

            var findings = Verification.findings(records: records, local: local, remote: remote)
            var hashed = 0
            if hashes {
                let flagged = Set(findings.map(\.path))
                for record in records where record.status == .inSync && !flagged.contains(record.path) {
                    guard let remoteVersion = remote[record.path] else { continue }
                    let localHash = try await BlockingIO.run { () throws(BackendError) in
                        try Self.sha256(ofFile: LocalFileSystem.join(pair.localRoot, record.path))
                    }
                    let remoteHash = try await remoteSHA256(record.remoteSpelling ?? record.path, version: remoteVersion)
                    hashed += 1
                    if localHash != remoteHash {
                        findings.append(VerificationFinding(path: record.path, kind: .contentDiffers,
                                                            detail: "SHA-256 local \(localHash.prefix(12))…, remote \(remoteHash.prefix(12))…"))
                    }
                }
            }
            var report = Report(folder: pair.name, checkedFiles: Set(records.map(\.path)).union(local.keys).union(remote.keys).count,
                                hashedFiles: hashed, findings: findings, repairedRows: 0, removedRows: 0)
            if repair {
                let fix = Verification.repaired(records: records, findings: findings, local: local, remote: remote,
                                                now: clock.wallTime())
                try await journal.applyRepairs(fix.upserts, removing: fix.removed.map { (pairId: pairId, path: $0) })
                report.repairedRows = fix.upserts.count
                report.removedRows = fix.removed.count
            }
            return report
        } catch let error as RunError {
            throw error
        } catch let error as JournalError {
            throw RunError(error.description)
        } catch let error as RunLockError {
            throw RunError("\(pair.localRoot): \(error.message)")
        } catch let error as BackendError {
            throw RunError(error.description)
        } catch {
            throw RunError("\(error)")
        }
    }

    /// Files with a name starting with `.` that Ferry put on the remote (the remote catalogs
    /// and the journal know them) but that the listing left out — nginx hides such names —
    /// are looked at one by one, so that verify neither reports them gone nor takes the
    /// server's word for their absence.
    private func addUnlistedHiddenFiles(to remote: inout [String: RemoteVersion], journal: Journal,
                                        pairId: Int64) async throws {
        let store = RemoteCatalogStore(pair: pair, stateDirectory: stateDirectory, pairId: pairId,
                                       host: ProcessInfo.processInfo.hostName)
        let cataloged = (try await store.load()?.entries ?? []) + (try await journal.catalogEntries(pairId: pairId))
        for path in Set(cataloged.map(\.path)).sorted() where remote[path] == nil {
            guard let relative = try? RelativePath(path),
                  let found = try await pair.backend.stat(pair.remoteRoot.appending(relative)), found.kind == .file else { continue }
            remote[path] = RemoteVersion(found)
        }
    }

    /// The remote copy's SHA-256, from a temporary download that is removed afterwards.
    private func remoteSHA256(_ path: String, version: RemoteVersion) async throws -> String {
        let source = pair.remoteRoot.appending(try RelativePath(path))
        let temporary = LocalFileSystem.join(NSTemporaryDirectory(), "ferry-verify-\(UUID().uuidString)")
        defer { try? LocalFileSystem.removeFile(temporary) }
        let expected = RemoteEntry(path: source, kind: .file, size: version.size, modifiedNanos: version.modifiedNanos, etag: version.etag)
        try await BlockingIO.run { () throws(BackendError) in
            _ = try BackendError.catching { try OpenFile(temporary, mode: .writeTruncate, permissions: 0o600) }
        }
        _ = try await pair.backend.download(DownloadRequest(source: source, partialFile: temporary, offset: 0, expected: expected, flush: false),
                                            observer: NullTransferObserver())
        return try await BlockingIO.run { () throws(BackendError) in try Self.sha256(ofFile: temporary) }
    }

    /// A file's SHA-256 as lowercase hex, read in 1 MiB pieces.
    static func sha256(ofFile path: String) throws(BackendError) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw BackendError(.notFound, "cannot open the file to hash it", path: path)
        }
        defer { try? handle.close() }
        var hash = MemberHash()
        do {
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                hash.update(chunk)
            }
        } catch {
            throw BackendError(.io, "cannot read the file to hash it: \(error.localizedDescription)", path: path)
        }
        return hash.finalizeHex()
    }
}
