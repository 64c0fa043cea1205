import FerryConfig
import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

extension BundleTransfers {
    /// Builds, uploads and records each new bundle of a push: the bundle first, then its
    /// manifest (so a manifest never names a missing bundle), then one journal transaction
    /// with the bundle, its members and its files in sync. A bundle that cannot be sent
    /// fails its files (`syncError`, with the cause); the next push plans them again.
    package func uploadBundles(_ groups: [[FileRecord]], format rule: ArchiveRule, summary: inout RunSummary) async throws(JournalError) {
        guard !groups.isEmpty else { return }
        for group in groups {
            progress.expect(queue: Self.queue, rank: archivesRank, files: group.count,
                            bytes: group.reduce(0) { $0 + $1.transferBytes })
        }
        for group in groups {
            try await uploadBundle(group, rule: rule, summary: &summary)
        }
    }

    private func uploadBundle(_ group: [FileRecord], rule: ArchiveRule, summary: inout RunSummary) async throws(JournalError) {
        let now = clock.wallTime()
        let name = BundleNaming.newName(format: rule.format, at: now)
        let file = LocalFileSystem.join(workDirectory, name)
        let manifestFile = LocalFileSystem.join(workDirectory, BundleNaming.manifestName(for: name))
        defer {
            try? LocalFileSystem.removeFile(file)
            try? LocalFileSystem.removeFile(manifestFile)
        }
        for _ in group { progress.began(queue: Self.queue) }

        let builder = BundleBuilder(localRoot: pair.localRoot, format: rule.format)
        let built: BundleBuilder.Result
        do {
            built = try await BlockingIO.run { () throws(BundleError) in try builder.build(group, into: file) }
        } catch {
            try await fail(group, message: error.message, summary: &summary)
            return
        }
        var vanished: [(pairId: Int64, path: String)] = []
        for left in built.left {
            progress.ended(queue: Self.queue, succeeded: true)
            summary.skippedFiles += 1
            if left.vanished {
                vanished.append((left.record.pairId, left.record.path))
                sink.emit(.skipped(path: left.record.path, reason: "vanished before it could be bundled"))
            } else {
                sink.emit(.skipped(path: left.record.path, reason: "changed while it was being bundled; the next push sends it"))
            }
        }
        try await journal?.forget(vanished)
        let packed = built.packed
        guard !packed.isEmpty else { return }

        let manifest = BundleManifest(
            bundle: name, format: rule.format.rawValue, size: built.size, createdAt: now,
            members: packed.map {
                BundleManifest.Member(path: $0.record.path, entry: $0.record.path, size: $0.data.bytes,
                                      modifiedNanos: $0.version.modifiedNanos, sha256: $0.data.sha256)
            })
        let observer = JobObserver(queue: Self.queue, progress: progress, throttle: throttle)
        let manifestResult: UploadResult
        do {
            try manifest.encoded().write(to: URL(fileURLWithPath: manifestFile))
        } catch {
            try await fail(packed.map(\.record), message: "cannot write the bundle manifest \(manifestFile): \(error)", summary: &summary)
            return
        }
        do throws(BackendError) {
            _ = try await upload(file, as: name, observer: observer)
            manifestResult = try await upload(manifestFile, as: BundleNaming.manifestName(for: name), observer: NullTransferObserver())
        } catch {
            try await fail(packed.map(\.record), message: "cannot upload bundle \(name): \(error.description)",
                           outage: error.suggestsOutage, summary: &summary)
            return
        }

        let bundle = BundleRecord(pairId: pairId, name: name, format: rule.format.rawValue, size: built.size,
                                  manifestSize: manifestResult.entry.size,
                                  manifestModifiedNanos: manifestResult.entry.modifiedNanos, createdAt: now)
        var members: [BundleMemberRecord] = []
        var files: [FileRecord] = []
        let syncedAt = clock.wallTime()
        for item in packed {
            members.append(BundleMemberRecord(pairId: pairId, bundle: name, path: item.record.path, entryName: item.record.path,
                                              size: item.data.bytes, modifiedNanos: item.version.modifiedNanos,
                                              sha256: item.data.sha256, stale: false))
            var record = item.record
            record.markInSync(local: item.version,
                              remote: RemoteVersion(size: item.data.bytes, modifiedNanos: item.version.modifiedNanos, etag: nil),
                              at: syncedAt)
            files.append(record)
        }
        try await journal?.recordUploadedBundle(bundle, members: members, files: files)
        for item in packed {
            progress.ended(queue: Self.queue, succeeded: true)
            summary.uploadedFiles += 1
            summary.uploadedBytes += item.data.bytes
            sink.emit(.transferred(path: item.record.path, queue: Self.queue, direction: .upload, bytes: item.data.bytes, resumedFrom: 0))
        }
    }
}
