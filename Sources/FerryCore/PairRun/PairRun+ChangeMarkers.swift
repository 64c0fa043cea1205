import FerryBundles
import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

/// Knowing that nothing changed on a shared remote without listing it (`ChangeMarker`).
///
/// A pull or sync lists the remote's `.ferry-catalog/` folder first (it did so already, for
/// the catalog of hidden names). When no other writer's marker moved since this pair last
/// looked, the journal is the remote side; when some did, only the folders their markers
/// name are listed. A full listing still comes every `remote_check`, with `--full`, and
/// whenever the markers cannot vouch (none on the remote, one gone or damaged, too many
/// folders). A push or sync that wrote to the remote announces the folders it wrote into
/// once its jobs are done, having noted them in the journal before its first write, so a
/// run stopped part-way announces them the next time. docs/two-way-sync.md.
extension PairRun {
    /// What the markers told this run, kept until it finishes.
    struct MarkerView {
        enum Decision: Equatable {
            case unchanged
            case folders(Set<String>)
            case listEverything
        }

        var decision: Decision
        /// What this run saw of the other writers: recorded once it finished.
        var seen: [String: ChangeMarkerReading.Seen]
        /// The catalog folder's listing (nil: there is none), which holds the catalogs too.
        var catalogFolder: [RemoteEntry]?
    }

    /// This pair's name among the writers of its remote folder.
    func markerWriterName(pairId: Int64) throws(RunError) -> String {
        do throws(SystemError) {
            return ChangeMarker.writerName(deviceId: try DeviceIdentity.id(stateDirectory: stateDirectory), pairId: pairId)
        } catch {
            throw RunError(.remoteListing, "cannot keep this device's id in the state folder: \(error.description)")
        }
    }

    /// The markers' first look for a pull or sync (nil for a push, which trusts its journal
    /// between listings on its own terms, or with no journal to compare with).
    func lookAtChangeMarkers(opened: OpenJournal, now: Double) async throws(RunError) -> MarkerView? {
        guard pair.mode != .push, let journal = opened.pairJournal else { return nil }
        let store = catalogStore(pairId: opened.pairId)
        let folder: [RemoteEntry]?
        do {
            folder = try await retriedOperation.run { () async throws(BackendError) in try await store.listFolder() }
        } catch {
            throw RunError(.remoteListing, "cannot list \(store.folder.string) in \(pair.remoteLocation): \(error.message)",
                           cause: .backend(error))
        }
        let seen: [String: ChangeMarkerReading.Seen]
        do {
            seen = try await journal.seenChangeMarkers(pairId: opened.pairId)
        } catch {
            throw RunError(.journal, error.description, cause: .journal(error))
        }
        let own = try markerWriterName(pairId: opened.pairId)
        let newest = ChangeMarkerReading.newest(in: folder ?? [])
        let look = ChangeMarkerReading.firstLook(listed: newest, seen: seen, own: own)
        var read: [(listed: ChangeMarkerReading.Listed, marker: ChangeMarker?)] = []
        if case let .read(markers) = look {
            for listed in markers {
                guard let entry = folder?.first(where: { $0.path == listed.path }) else { continue }
                let data = try? await retriedOperation.run { () async throws(BackendError) in try await store.fetchData(entry) }
                read.append((listed, data.flatMap { $0 }.flatMap(ChangeMarker.decode)))
            }
        }
        var decision = MarkerView.Decision.listEverything
        if try await mayTrustMarkers(opened: opened, now: now) {
            var answer: ChangeMarkerReading.Answer
            switch look {
            case .unchanged: answer = .folders([])
            case let .listEverything(why): answer = .listEverything(why)
            case .read: answer = ChangeMarkerReading.answer(read: read, seen: seen)
            }
            let ownUnannounced: Journal.OwnChangeMarker
            do {
                ownUnannounced = try await journal.ownChangeMarker(pairId: opened.pairId)
            } catch {
                throw RunError(.journal, error.description, cause: .journal(error))
            }
            if ownUnannounced.hasPending {
                answer = ChangeMarkerReading.answer(answer, listingAlso: ownUnannounced.pending)
            }
            if case let .folders(folders) = answer { decision = folders.isEmpty ? .unchanged : .folders(folders) }
        }
        return MarkerView(decision: decision,
                          seen: ChangeMarkerReading.seen(after: read, listed: newest, before: seen, own: own),
                          catalogFolder: folder)
    }

    /// Whether this run may take the markers' word instead of a full listing: one was
    /// taken within `remote_check` by a run that finished, and nothing asks for another.
    private func mayTrustMarkers(opened: OpenJournal, now: Double) async throws(RunError) -> Bool {
        guard !options.fullListing, config.archive == nil, let journal = opened.pairJournal,
              let lastListed = opened.pairRecord?.lastListedAt else { return false }
        let interval = Double(pair.remoteCheck.components.seconds)
        guard interval > 0, lastListed <= now, now - lastListed < interval else { return false }
        do {
            return try await journal.bundles(pairId: opened.pairId).isEmpty
        } catch {
            throw RunError(.journal, error.description, cause: .journal(error))
        }
    }

    /// The remote side when the markers name the folders that changed: those folders
    /// listed (one request each), the journal's view everywhere else.
    func snapshotChangedFolders(_ folders: Set<String>, markers: MarkerView, opened: OpenJournal,
                                rules: Rules) async throws(RunError) -> RemoteSnapshot {
        var listing: [RemoteEntry] = []
        let waitToRetry = remoteRetryWait
        for folder in folders.sorted() {
            let path: RelativePath
            if folder.isEmpty {
                path = pair.remoteRoot
            } else {
                guard let relative = try? RelativePath(folder) else { continue }
                path = pair.remoteRoot.appending(relative)
            }
            do {
                listing += try await pair.backend.list(path, waitToRetry: waitToRetry).filter { $0.kind == .file }
            } catch where error.code == .notFound {
                continue
            } catch {
                throw RunError(.remoteListing, "cannot list \(path.string) in \(pair.remoteLocation): \(error.message)",
                               cause: .backend(error))
            }
        }
        var (remote, _) = Self.remoteContent(of: listing, pair: pair, ignore: rules.ignore)
        let clashes = NormalizationClash.groups(in: remote.keys.sorted())
        // Hidden names the server may have left out, in the folders listed only.
        let inListed = { (entry: RemoteCatalog.Entry) in folders.contains(ChangeMarker.folder(of: entry.path)) }
        let catalog = try await loadCatalog(pairId: opened.pairId, markers: markers)
        let known: [RemoteCatalog.Entry]
        do {
            known = pair.mode == .pull ? [] : try await opened.pairJournal?.catalogEntries(pairId: opened.pairId) ?? []
        } catch {
            throw RunError(.journal, error.description, cause: .journal(error))
        }
        let incomplete = try await mergeCatalog(catalog.map { RemoteCatalog(entries: $0.entries.filter(inListed)) },
                                                known: known.filter(inListed), into: &remote, listedAny: true, opened: opened)
        return RemoteSnapshot(files: remote, relisted: folders, catalog: BundleCatalog(), bundles: bundleTransfers(opened: opened, rules: rules),
                              incomplete: incomplete, clashes: clashes, markers: markers)
    }

    /// Before the engine's first write: the folders its jobs write into are noted as not
    /// yet announced (all of them when bundles change, whose catalog every reader reads).
    func notePendingChanges(journal: Journal, pairId: Int64, bundlesChange: Bool) async throws(JournalError) {
        guard pair.mode != .pull else { return }
        let folders = bundlesChange ? nil : try await journal.pendingJobFolders(pairId: pairId)
        if let folders, folders.isEmpty { return }
        try await journal.addPendingChanges(pairId: pairId, folders: folders)
    }

    /// After the run: announces what this pair wrote into and has not announced (this run's
    /// folders, a stopped run's, the files a watched folder handed over meanwhile). Returns
    /// why it could not; the folders stay noted for the next run.
    func publishChangeMarker(journal: Journal, pairId: Int64, summary: RunSummary, startedAt: Double) async -> String? {
        guard pair.mode != .pull else { return nil }
        do {
            // A file decided again mid-run (another device wrote it meanwhile) may have
            // written a conflict copy where the plan only downloaded.
            if summary.changedDuringRun > 0 || summary.keptBothFiles > 0 {
                try await journal.addPendingChanges(pairId: pairId, folders: try await journal.syncedFolders(pairId: pairId, since: startedAt))
            }
            if let feed = options.jobFeed {
                let fed = Set(feed.takenPaths.map(ChangeMarker.folder(of:)))
                if !fed.isEmpty { try await journal.addPendingChanges(pairId: pairId, folders: fed) }
            }
            let own = try await journal.ownChangeMarker(pairId: pairId)
            // A two-way device introduces itself with its first run, even one that wrote
            // nothing: the others then know that a device here marks its changes.
            let introduces = pair.mode == .sync && own.marker == nil
            guard own.hasPending || introduces else { return nil }
            let writer = try markerWriterName(pairId: pairId)
            let store = catalogStore(pairId: pairId)
            // A push marks its changes where another device marks its own (one request, in
            // runs that wrote): a two-way device there trusts the markers, and a push that
            // marked nothing would go unseen by it. A push alone leaves no marker behind.
            if pair.mode == .push && own.marker == nil {
                let listed = try await retriedOperation.run { () async throws(BackendError) in try await store.listFolder() }
                guard ChangeMarkerReading.newest(in: listed ?? []).keys.contains(where: { $0 != writer }) else {
                    try await journal.clearPendingChanges(pairId: pairId)
                    return nil
                }
            }
            let previous = own.marker?.writer == writer ? own.marker : nil
            let seq = (previous?.seq ?? 0) + 1
            var marker = (previous ?? ChangeMarker(writer: writer, device: "", entries: []))
                .adding(seq: seq, at: options.clock.wallTime(), folders: own.hasPending ? own.pending : [])
            marker.device = DeviceIdentity.name(stateDirectory: stateDirectory)
            let data = marker.encoded()
            let now = options.clock.wallTime()
            // The sequence number is spent before the file is written: a run stopped after
            // the write and before its record would otherwise write the same name again
            // with other folders, and a reader that saw the first would never see them.
            try await journal.reserveChangeMarker(pairId: pairId, marker)
            try await retriedOperation.run { () async throws(BackendError) in
                try await store.put(data, named: ChangeMarker.fileName(writer: writer, seq: seq), now: now)
            }
            try await journal.recordPublishedChangeMarker(pairId: pairId, marker)
            // The older file only costs a reader a name to skip: a failure here is no failure.
            if let previous {
                try? await store.remove(named: ChangeMarker.fileName(writer: writer, seq: previous.seq))
            }
            return nil
        } catch {
            let cause = (error as? BackendError)?.description ?? "\(error)"
            return "the change marker could not be written (\(cause)): the other devices see this run's "
                + "changes at their next full listing, or after this folder's next run"
        }
    }
}
