import FerryEngine
import FerryJournal
import FerryPluginAPI
import FerrySystem
import Foundation

/// The remote side's completeness: a pull or sync from a remote folder that does not exist
/// fails instead of finding nothing, and names a server leaves out of its listings are
/// read from the pair's remote catalog (`RemoteCatalog`), which a push or sync keeps.
extension PairRun {
    /// A backend operation outside the engine, retried and waited out as its jobs are.
    var retriedOperation: RetriedOperation {
        let remote = pair.backend.displayName
        let sink = self.sink
        return RetriedOperation(retry: config.retry, backend: pair.backend, clock: options.clock,
                                onOffline: { message, next in sink.emit(.remoteOffline(remote: remote, message: message, nextProbeSeconds: next)) },
                                onOnline: { seconds in sink.emit(.remoteOnline(remote: remote, offlineSeconds: seconds)) })
    }

    func catalogStore(pairId: Int64) -> RemoteCatalogStore {
        RemoteCatalogStore(pair: pair, stateDirectory: stateDirectory, pairId: pairId,
                           host: options.hostName ?? ProcessInfo.processInfo.hostName)
    }

    /// A pull needs its remote folder: one that does not exist (a typo in the path) is an
    /// error before the local folder is created, not an empty tree. A push creates it, and
    /// so does a sync's first run; a sync that ran before and finds its remote folder gone
    /// stops (carrying that over would empty the local folder).
    func requireRemoteFolder(firstRun: Bool) async throws(RunError) {
        guard pair.mode == .pull || (pair.mode == .sync && !firstRun) else { return }
        let found: RemoteEntry?
        do {
            // Retried as listings are: one 503 at a run's first request must not fail it.
            found = try await pair.backend.stat(pair.remoteRoot, waitToRetry: remoteRetryWait)
        } catch {
            throw RunError(.remoteListing, "cannot look at \(pair.remoteLocation): \(error.message)"
                + (error.cause.map { ": \($0)" } ?? ""), cause: .backend(error))
        }
        guard let found, found.kind == .directory else {
            let what = found == nil ? "does not exist" : "is a file, not a folder"
            throw RunError(.remoteListing, "the remote folder \(pair.remoteLocation) \(what); check the path"
                + (pair.mode == .sync ? " (it was there at the last sync; if it moved, fix the path; to start over, ferry forget this folder)" : ""))
        }
    }

    /// The remote catalogs of a pull or sync, merged; nil when there are none (or for a push,
    /// which knows its remote side from the journal).
    /// `markers`: the change markers' look, whose listing of the catalog folder is reused.
    func loadCatalog(pairId: Int64, markers: MarkerView?) async throws(RunError) -> RemoteCatalog? {
        // With --ignore-hidden-names the person has said the catalogs do not matter: not
        // even a damaged or oversized one stops the run.
        guard pair.mode != .push, !pair.ignoresHiddenNames, !options.ignoresHiddenNames else { return nil }
        do {
            let store = catalogStore(pairId: pairId)
            if let markers {
                let listed = markers.catalogFolder
                return try await retriedOperation.run { () async throws(BackendError) in try await store.load(listed: listed) }
            }
            return try await retriedOperation.run { () async throws(BackendError) in try await store.load() }
        } catch {
            throw RunError(.remoteListing, "cannot read the remote catalog in \(pair.remoteLocation): \(error.message)",
                           cause: .backend(error))
        }
    }

    /// Adds the hidden files a listing left out, where the server hides such names: those of
    /// the remote catalog (`catalog`, for a pull or sync) and those the journal knows it put
    /// there (`known`, for a push or sync, so that a mirror push still deletes them). On a
    /// server that lists such names, a cataloged file missing from the listing was deleted.
    /// Returns why the remote side may be incomplete: a pull or sync from a server that
    /// hides names, with no catalog to read them from.
    /// `listedAny`: whether the listing showed any file.
    func mergeCatalog(_ catalog: RemoteCatalog?, known: [RemoteCatalog.Entry],
                      into remote: inout [String: RemoteEntry], listedAny: Bool, opened: OpenJournal) async throws(RunError) -> String? {
        let startedEmpty = try await remoteStartedEmpty(opened: opened, listedAny: listedAny)
        let unlisted = ((catalog?.entries ?? []) + known).filter { remote[$0.path] == nil }
        // A pull or sync with nothing to read hidden names from. A sync into a folder that
        // lists nothing is a first upload (the names it hides could only be its own, and
        // it writes the catalog), and so is the same sync run again after it was stopped
        // before it wrote the catalog: what it listed then is its own upload.
        let lacksCatalog = catalog == nil && !pair.ignoresHiddenNames && !options.ignoresHiddenNames
            && (pair.mode == .pull || (pair.mode == .sync && listedAny && !startedEmpty))
        // Only a question worth a probe: nothing to add, or nothing to go on.
        guard lacksCatalog || !unlisted.isEmpty else { return nil }
        let capabilities: BackendCapabilities
        do {
            capabilities = try await pair.backend.discoverCapabilities()
        } catch {
            throw RunError(.remoteListing, "cannot probe \(pair.remoteLocation): \(error.message)", cause: .backend(error))
        }
        guard capabilities.listingOmitsHiddenNames else { return nil }
        // Added before the answer about a missing catalog, not skipped by it: a sync that
        // left out the hidden files the journal knows it put there took them for deleted on
        // the remote and deleted the local copies.
        // Each is looked at rather than taken from a catalog: catalogs are per writer, and a
        // writer's still lists a file another device has since deleted or replaced there (a
        // deleted `.thumbnails/x` came back, an edit of `.nomedia` was not seen).
        let waitToRetry = remoteRetryWait
        for path in Set(unlisted.map(\.path)).sorted() {
            guard let relative = try? RelativePath(path) else { continue }
            let found: RemoteEntry?
            do {
                found = try await pair.backend.stat(pair.remoteRoot.appending(relative), waitToRetry: waitToRetry)
            } catch {
                throw RunError(.remoteListing, "cannot look at \(path) in \(pair.remoteLocation): \(error.message)",
                               cause: .backend(error))
            }
            if let found, found.kind == .file { remote[path] = found }
        }
        guard !lacksCatalog else {
            return "\(pair.remoteLocation): the server leaves names that start with '.' out of its listings, "
                + "and Ferry has no catalog of this folder there: such files cannot be seen and were not pulled "
                + "(push them with Ferry from where they are, which writes the catalog, or pass --ignore-hidden-names)"
        }
        return nil
    }

    /// Whether this pair's first sync found its remote folder empty, recorded the first time
    /// it does. A first sync stopped (Ctrl-C, a crash) before it wrote the catalog lists its
    /// own uploads when it runs again; without the record that run said it could not see
    /// hidden names there and exited 1, though it had put every file there itself.
    private func remoteStartedEmpty(opened: OpenJournal, listedAny: Bool) async throws(RunError) -> Bool {
        guard pair.mode == .sync, let record = opened.pairRecord, let id = record.id else { return false }
        if record.remoteStartedEmptyAt != nil { return true }
        guard !listedAny, record.lastRunAt == nil, !options.dryRun, let journal = opened.journal else { return false }
        do {
            try await journal.markRemoteStartedEmpty(pairId: id, at: options.clock.wallTime())
        } catch {
            throw RunError(.journal, error.description, cause: .journal(error))
        }
        return true
    }

    /// After a push or sync that changed the remote (or never wrote its catalog): writes
    /// this writer's catalog of hidden names from the journal. Returns why it could not.
    func saveCatalog(journal: Journal, pairId: Int64, summary: RunSummary, now: Double) async -> String? {
        guard pair.mode != .pull else { return nil }
        let store = catalogStore(pairId: pairId)
        let changed = summary.uploadedFiles + summary.deletedFiles + summary.movedFiles + summary.keptBothFiles > 0
        // Files this writer put there before it kept a catalog (an older Ferry, another
        // state folder) get one on the next run, even one that sends nothing.
        let neverWritten = !FileManager.default.fileExists(atPath: store.digestFile)
        guard changed || neverWritten else { return nil }
        do {
            let entries = try await journal.catalogEntries(pairId: pairId)
            // A store found to keep no modification times (asked after the run's first
            // upload): the catalog keeps them, for pulls to restore.
            let capabilities = pair.backend.capabilities
            let times = KeptFileTime.needed(by: capabilities)
                ? try await journal.keptFileTimes(pairId: pairId, limit: RemoteCatalog.maxTimes) : nil
            // A catalog is written where it says something: hidden names to remember, a
            // server known to hide them (an empty catalog tells a later pull there are
            // none), times to keep, or an earlier catalog to update.
            guard !entries.isEmpty || capabilities.listingOmitsHiddenNames || !(times ?? []).isEmpty
                    || FileManager.default.fileExists(atPath: store.digestFile) else { return nil }
            try await retriedOperation.run { () async throws(BackendError) in try await store.save(entries, times: times, now: now) }
            return nil
        } catch let error as BackendError {
            return "the remote catalog of names that start with '.' could not be written (\(error.description)); run again"
        } catch {
            return "the remote catalog of names that start with '.' could not be written (\(error)); run again"
        }
    }
}
