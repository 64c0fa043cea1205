import FerryEngine
import FerryPluginAPI
import Foundation

/// Write leases for stores that cannot keep concurrent writers apart on their own
/// (`WriteLease`, docs/two-way-sync.md "Write leases").
extension PairRun {
    /// The keeper of this pair's write lease when this run needs one: a run with jobs that
    /// other devices may write beside (a two-way sync, or a push into a folder that keeps
    /// every version), on a store without conditional new names or without an atomic move.
    func writeLeaseKeeper(opened: OpenJournal) async throws(RunError) -> WriteLeaseKeeper? {
        // A folder without `delete` takes it too: its replacing writes are conditional
        // (`If-Match`) only on stores that honour the condition, and its lease is given
        // back by emptying the file, not deleting it. A plain push replaces what is there
        // by design, so only a push that promises to keep the replaced version takes it.
        guard pair.mode == .sync || (pair.mode == .push && pair.savesVersions), let journal = opened.journal else { return nil }
        let capabilities = pair.backend.capabilities
        guard !(capabilities.conditionalNewNames && capabilities.atomicMove) else { return nil }
        let pending: Bool
        do {
            pending = !(try await journal.pendingJobTotals(pairId: opened.pairId).isEmpty)
        } catch {
            throw RunError(.journal, error.description, cause: .journal(error))
        }
        guard pending else { return nil }
        return WriteLeaseKeeper(store: catalogStore(pairId: opened.pairId), writer: try markerWriterName(pairId: opened.pairId),
                                device: DeviceIdentity.name(stateDirectory: stateDirectory),
                                duration: options.writeLeaseSeconds, clock: options.clock)
    }

    /// Takes the lease (`WriteLeaseKeeper.take`); returns the catalog folder as listed
    /// holding it.
    func take(_ keeper: WriteLeaseKeeper) async throws(RunError) -> [RemoteEntry] {
        do {
            let maxWait = await keeper.duration * 2.5
            let sink = self.sink, remote = pair.remoteLocation
            return try await keeper.take(maxWait: maxWait) { holder in
                sink.emit(.waitingForWriteLease(remote: remote, holder: holder, maxWaitSeconds: maxWait))
            }
        } catch let refusal as WriteLeaseKeeper.Refusal {
            let holder = refusal.holder.map { "another device (\($0))" } ?? "another device"
            throw RunError(.execute, "\(holder) is writing to \(pair.remoteLocation) and holds its write lease; "
                + "waited \(Int(refusal.waited)) s: run the sync again later")
        } catch let error as BackendError {
            throw RunError(.execute, "cannot take the write lease in \(pair.remoteLocation): \(error.message)",
                           cause: .backend(error))
        } catch {
            throw RunError(.execute, "stopped while waiting for the write lease", cause: .stopped)
        }
    }

    /// Whether another writer's change marker in `listing` differs from what this run's
    /// first look saw: that writer wrote since, and the plan may not know it.
    static func otherMarkersMoved(in listing: [RemoteEntry], since view: MarkerView?, own: String) -> Bool {
        let now = ChangeMarkerReading.newest(in: listing).filter { $0.key != own }.mapValues(\.seq)
        let before = ChangeMarkerReading.newest(in: view?.catalogFolder ?? []).filter { $0.key != own }.mapValues(\.seq)
        return now != before
    }
}
