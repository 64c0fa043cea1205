import FerryBundles
import FerryEngine
import FerryPluginAPI

/// A push folder knows its remote side from the journal: what Ferry put there, as the
/// server answered each upload. Listing a large tree costs a request per folder (and
/// a `stat` per file on a local remote) for nothing on most runs, so a push lists the
/// remote only when its last complete listing is older than `remote_check` (24 hours by
/// default), with `--full`, on a mirror push (which must see files it did not put there),
/// and when archive bundles are in play. Changes made behind Ferry's back (a file deleted
/// or replaced on the server) are noticed by that next listing, or by `ferry verify`.
/// Pull and sync folders list on every run: the remote is where their changes come from.
/// docs/remote-check.md.
extension PairRun {
    /// The remote side from the journal, or nil when this run must list it.
    func journalSnapshot(opened: OpenJournal, rules: Rules, now: Double) async throws(RunError) -> RemoteSnapshot? {
        guard pair.mode == .push, !options.fullListing, !options.mirror, config.archive == nil,
              let journal = opened.pairJournal, let lastListed = opened.pairRecord?.lastListedAt else { return nil }
        let interval = Double(pair.remoteCheck.components.seconds)
        // A clock set back since the listing is no reason to trust it longer.
        guard interval > 0, lastListed <= now, now - lastListed < interval else { return nil }
        do {
            guard try await journal.bundles(pairId: opened.pairId).isEmpty else { return nil }
        } catch {
            throw RunError(.journal, error.description, cause: .journal(error))
        }
        return RemoteSnapshot(files: [:], fromJournal: true, catalog: BundleCatalog(), bundles: bundleTransfers(opened: opened, rules: rules),
                              incomplete: nil)
    }
}
