import FerryConfig
import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

/// What one push or pull transfers as archive bundles, around the transfer engine (see
/// docs/archive-bundles.md):
///
/// - before planning, `loadCatalog` reads the remote's bundle manifests (from the journal
///   when it already knows them unchanged) so the planner sees bundled files as present;
/// - after planning, `BundlePlanner.partition` takes the bundle jobs out of the plan;
/// - after the engine, a push builds and uploads the new bundles (`uploadBundles`) and
///   retires members that left their bundles (`retireMembers`), and a pull restores
///   bundled files (`restoreBundled`).
///
/// Bundles run after the engine's jobs: they are the `archives` queue, the lowest.
package struct BundleTransfers: Sendable {
    package static let queue = "archives"

    package let pair: FolderPair
    package let rule: ArchiveRule?
    /// nil on a dry run without a journal yet.
    package let journal: Journal?
    package let pairId: Int64
    /// Where bundles are built and downloaded: `STATE/bundles/pair-N`, the pair's own, so
    /// that it is only used under the pair's run lock.
    package let workDirectory: String
    package let retry: RetryPolicy
    /// What restores leave free on the local disk.
    package let freeSpaceReserve: FreeSpaceReserve
    package let throttle: ByteThrottle?
    package let progress: RunProgress
    package let sink: any RunEventSink
    package let archivesRank: Int
    /// The run's clock: its wall time stamps the journal's rows.
    package let clock: any FerryClock

    package init(pair: FolderPair, rule: ArchiveRule?, journal: Journal?, pairId: Int64, workDirectory: String,
                 retry: RetryPolicy, freeSpaceReserve: FreeSpaceReserve, throttle: ByteThrottle?, progress: RunProgress,
                 sink: any RunEventSink, archivesRank: Int, clock: any FerryClock) {
        self.pair = pair
        self.rule = rule
        self.journal = journal
        self.pairId = pairId
        self.workDirectory = workDirectory
        self.retry = retry
        self.freeSpaceReserve = freeSpaceReserve
        self.throttle = throttle
        self.progress = progress
        self.sink = sink
        self.archivesRank = archivesRank
        self.clock = clock
    }

    package var bundleFolder: RelativePath { BundleNaming.folder(in: pair.remoteRoot) }

    /// Removes what a run killed while building or restoring bundles left in the work
    /// folder. Called with the pair's run lock held, so no other run is using it.
    package func clearWorkDirectory() {
        guard let names = try? LocalFileSystem.directoryEntries(workDirectory) else { return }
        for name in names { try? LocalFileSystem.removeFile(LocalFileSystem.join(workDirectory, name)) }
    }

    // MARK: Catalog

    /// The remote's bundles from the listing of the bundle folder. A manifest the journal
    /// has with the same size and time is taken from the journal; others are fetched and
    /// remembered (unless `writes` is false: a dry run). Bundles the journal knows but the
    /// remote no longer has are forgotten.
    ///
    /// Manifests are read one at a time, each bounded (`BundleManifest.maxSize`); more
    /// members than `maxMembers` in all is refused, like a listing past its bound.
    package func loadCatalog(listed: [RemoteEntry], writes: Bool,
                     maxMembers: Int = ListingBounds.standard.maxEntries) async throws(RunError) -> BundleCatalog {
        var catalog = BundleCatalog()
        var files: [String: RemoteEntry] = [:]
        for entry in listed where entry.kind == .file && entry.path.parent == bundleFolder {
            files[entry.path.name] = entry
        }
        let known: [String: BundleRecord]
        let knownMembers: [String: [BundleMemberRecord]]
        do {
            let bundles = try await journal?.bundles(pairId: pairId) ?? []
            known = Dictionary(bundles.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            knownMembers = Dictionary(grouping: try await journal?.bundleMembers(pairId: pairId) ?? [], by: \.bundle)
        } catch {
            throw RunError(error.description)
        }

        for (name, entry) in files {
            let bundleName = BundleNaming.bundleName(ofManifest: name)
            let paired = bundleName.map { files[$0] != nil }
                ?? (BundleNaming.isBundleName(name) && files[BundleNaming.manifestName(for: name)] != nil)
            if !paired { catalog.orphans.append(entry) }
        }
        for (manifestName, manifestEntry) in files.sorted(by: { $0.key < $1.key }) {
            guard let bundleName = BundleNaming.bundleName(ofManifest: manifestName),
                  let bundleFile = files[bundleName] else { continue }
            if let record = known[bundleName], record.manifestSize == manifestEntry.size,
               record.manifestModifiedNanos == nil || record.manifestModifiedNanos == manifestEntry.modifiedNanos {
                catalog.add(record, file: bundleFile, members: knownMembers[bundleName] ?? [])
                continue
            }
            let manifest = try await fetchManifest(manifestEntry)
            let record = BundleRecord(pairId: pairId, name: bundleName, format: manifest.format, size: manifest.size,
                                      manifestSize: manifestEntry.size, manifestModifiedNanos: manifestEntry.modifiedNanos,
                                      createdAt: manifest.createdAt)
            let members = manifest.members.map {
                BundleMemberRecord(pairId: pairId, bundle: bundleName, path: $0.path, entryName: $0.entry, size: $0.size,
                                   modifiedNanos: $0.modifiedNanos, sha256: $0.sha256, stale: false)
            }
            catalog.add(record, file: bundleFile, members: members)
            guard catalog.members.count <= maxMembers else {
                throw RunError("the remote's bundle manifests name more than \(maxMembers) files (\(ListingBounds.entriesKey)); "
                    + "stopped reading them. Raise \(ListingBounds.entriesKey) in config.yml if there are really that many")
            }
            if writes, let journal, pairId != 0 {
                do {
                    try await journal.replaceBundle(record, members: members)
                } catch {
                    throw RunError(error.description)
                }
            }
        }
        if writes, let journal {
            for name in known.keys where catalog.bundles[name] == nil {
                do {
                    try await journal.removeBundle(pairId: pairId, name: name)
                } catch {
                    throw RunError(error.description)
                }
            }
        }
        return catalog
    }

    private func fetchManifest(_ entry: RemoteEntry) async throws(RunError) -> BundleManifest {
        guard entry.size <= BundleManifest.maxSize else {
            throw RunError("the bundle manifest \(entry.path) is \(entry.size) bytes, more than the \(BundleManifest.maxSize >> 20) MiB "
                + "a manifest can be; it was not written by Ferry: remove it and its bundle from the remote")
        }
        let partial = LocalFileSystem.join(workDirectory, TemporaryName.for(entry.path.name))
        defer { try? LocalFileSystem.removeFile(partial) }
        do {
            try LocalFileSystem.makeDirectories(workDirectory, permissions: 0o700)
            _ = try OpenFile(partial, mode: .writeTruncate, permissions: 0o600)
            _ = try await withRetries { () async throws(BackendError) -> DownloadResult in
                try await pair.backend.download(DownloadRequest(source: entry.path, partialFile: partial, offset: 0, expected: entry),
                                                observer: NullTransferObserver())
            }
            let data = try Data(contentsOf: URL(fileURLWithPath: partial))
            return try BundleManifest.decode(data, name: entry.path.name)
        } catch let error as BundleError {
            throw RunError(error.message)
        } catch {
            throw RunError("cannot read the bundle manifest \(entry.path): \(error)")
        }
    }

    // MARK: Shared

    /// Runs a backend operation as the engine runs a job (`RetriedOperation`): retried with
    /// the run's backoff, an outage waited out with probes.
    func withRetries<T: Sendable>(_ body: () async throws(BackendError) -> T) async throws(BackendError) -> T {
        let remote = pair.backend.displayName
        let sink = self.sink
        return try await RetriedOperation(
            retry: retry, backend: pair.backend,
            onOffline: { message, next in sink.emit(.remoteOffline(remote: remote, message: message, nextProbeSeconds: next)) },
            onOnline: { seconds in sink.emit(.remoteOnline(remote: remote, offlineSeconds: seconds)) }
        ).run(body)
    }

    /// Books files that failed in this step: for good (`syncError`), or, when the remote
    /// stopped answering (`outage`), left pending with their attempts untouched, like the
    /// engine does after waiting out an outage.
    package func fail(_ records: [FileRecord], message: String, outage: Bool = false,
              summary: inout RunSummary) async throws(JournalError) {
        var failed: [FileRecord] = []
        let text = outage ? message + "; the file stays queued: run again when the server is back" : message
        for record in records {
            var updated = record
            if outage {
                updated.handBack(action: record.action ?? .upload, error: text, at: clock.wallTime())
            } else {
                updated.failForGood(failures: record.attempts + 1, error: text, at: clock.wallTime())
            }
            failed.append(updated)
            summary.failedFiles += 1
            summary.failures.append(RunSummary.Failure(path: record.path, message: text))
            sink.emit(.failed(path: record.path, queue: Self.queue, message: text, willRetry: false, attempt: updated.attempts))
            progress.ended(queue: Self.queue, succeeded: false)
        }
        try await journal?.bookResults(failed)
    }

    /// Uploads a local file to the bundle folder under `name`, replacing what is there.
    package func upload(_ source: String, as name: String, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        guard let meta = try BackendError.catching({ try LocalFileSystem.metadata(source) }) else {
            throw BackendError(.io, "the file to upload vanished", path: source)
        }
        let destination = try bundleFolder.appending(name)
        return try await withRetries { () async throws(BackendError) -> UploadResult in
            try await pair.backend.upload(
                UploadRequest(source: source, destination: destination, size: meta.size,
                              modifiedNanos: meta.modifiedNanos, mayResume: false),
                observer: observer)
        }
    }
}
