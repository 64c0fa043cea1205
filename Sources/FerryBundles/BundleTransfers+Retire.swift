import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

extension BundleTransfers {
    /// After a push's engine run: members whose files were sent plain (`leaving`, now in
    /// sync) or deleted (`deletions`, push with --delete) leave their bundles. Each touched
    /// bundle's manifest is rewritten without them, or, when no member is left, the bundle
    /// and its manifest are deleted. Bundles with members marked stale by an earlier run
    /// that stopped before its rewrite are rewritten too.
    package func retireMembers(leaving: [FileRecord], deletions: [FileRecord], catalog: BundleCatalog,
                       summary: inout RunSummary) async throws(JournalError) {
        guard let journal else { return }
        var stale: [(bundle: String, path: String)] = []
        for job in leaving {
            guard let member = catalog.members[job.path],
                  let current = try await journal.record(pairId: pairId, path: job.path), current.status == .inSync else { continue }
            stale.append((member.bundle, job.path))
        }
        for job in deletions {
            guard let member = catalog.members[job.path] else { continue }
            stale.append((member.bundle, job.path))
        }
        try await journal.markBundleMembersStale(pairId: pairId, members: stale)
        try await journal.forget(deletions.map { (pairId: $0.pairId, path: $0.path) })
        for job in deletions {
            summary.deletedFiles += 1
            sink.emit(.deleted(path: job.path, queue: job.queue, side: .deleteRemote))
        }

        await removeOrphans(catalog.orphans)

        let members = try await journal.bundleMembers(pairId: pairId)
        let touched = Set(members.filter(\.stale).map(\.bundle))
        for name in touched.sorted() {
            guard let bundle = catalog.bundles[name] else { continue }
            let live = members.filter { $0.bundle == name && !$0.stale }
            var updated = bundle
            do throws(BackendError) {
                if live.isEmpty {
                    // Without delete an emptied bundle stays where it is (its members are
                    // no longer read from it).
                    guard pair.rights.mayDelete else { continue }
                    let manifestPath = try bundleFolder.appending(BundleNaming.manifestName(for: name))
                    let bundlePath = try bundleFolder.appending(name)
                    try await withRetries { () async throws(BackendError) in try await pair.backend.delete(manifestPath) }
                    try await withRetries { () async throws(BackendError) in try await pair.backend.delete(bundlePath) }
                } else {
                    let result = try await uploadManifest(name: name, bundle: bundle, members: live)
                    updated.manifestSize = result.entry.size
                    updated.manifestModifiedNanos = result.entry.modifiedNanos
                }
            } catch {
                // The members stay marked stale; the next push tries the rewrite again.
                sink.emit(.failed(path: BundleNaming.folderName + "/" + name, queue: Self.queue,
                                  message: "cannot rewrite the bundle's manifest: \(error.description)", willRetry: true, attempt: 1))
                continue
            }
            if live.isEmpty {
                try await journal.removeBundle(pairId: pairId, name: name)
            } else {
                try await journal.replaceBundle(updated, members: live)
            }
        }
    }

    /// Writes and uploads a manifest listing `members` for an existing bundle.
    private func uploadManifest(name: String, bundle: BundleRecord,
                                members: [BundleMemberRecord]) async throws(BackendError) -> UploadResult {
        let manifest = BundleManifest(
            bundle: name, format: bundle.format, size: bundle.size, createdAt: bundle.createdAt,
            members: members.map {
                BundleManifest.Member(path: $0.path, entry: $0.entryName, size: $0.size,
                                      modifiedNanos: $0.modifiedNanos, sha256: $0.sha256)
            })
        let file = LocalFileSystem.join(workDirectory, BundleNaming.manifestName(for: name))
        defer { try? LocalFileSystem.removeFile(file) }
        try BackendError.catching { try LocalFileSystem.makeDirectories(workDirectory, permissions: 0o700) }
        do {
            try manifest.encoded().write(to: URL(fileURLWithPath: file))
        } catch {
            throw BackendError(.io, "cannot write the manifest", path: file, cause: "\(error)")
        }
        return try await upload(file, as: BundleNaming.manifestName(for: name), observer: NullTransferObserver())
    }

    /// How old a half-uploaded bundle or manifest must be before a push removes it: a
    /// push of another machine may be between its two uploads right now.
    static let orphanAge: Double = 3600

    /// Removes what a push that stopped between a bundle's two uploads left behind, once
    /// it is old enough; names Ferry does not make are left alone.
    private func removeOrphans(_ orphans: [RemoteEntry]) async {
        guard pair.rights.mayDelete else { return }
        let cutoff = Int64((clock.wallTime() - Self.orphanAge) * 1e9)
        for orphan in orphans {
            let name = orphan.path.name
            guard BundleNaming.isBundleName(name) || BundleNaming.bundleName(ofManifest: name) != nil,
                  let modified = orphan.modifiedNanos, modified < cutoff else { continue }
            try? await pair.backend.delete(orphan.path)
        }
    }
}
