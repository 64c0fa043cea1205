import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

extension BundleTransfers {
    /// Restores a pull's bundled-only files: each bundle is downloaded once into the work
    /// folder and the wanted members are extracted (`BundleExtractor`). A bundle that
    /// cannot be fetched or read fails its files one by one with the cause; manifest
    /// members with hostile paths fail as well, without a byte written.
    package func restoreBundled(_ restores: [String: [FileRecord]], catalog: BundleCatalog,
                        summary: inout RunSummary) async throws(JournalError) {
        for refusal in catalog.refusals {
            let message = "\(refusal.reason) in bundle \(refusal.bundle)"
            summary.failedFiles += 1
            summary.failures.append(RunSummary.Failure(path: refusal.path, message: message))
            sink.emit(.failed(path: refusal.path, queue: Self.queue, message: message, willRetry: false, attempt: 1))
        }
        guard !restores.isEmpty else { return }
        for jobs in restores.values {
            progress.expect(queue: Self.queue, rank: archivesRank, files: jobs.count, bytes: jobs.reduce(0) { $0 + $1.transferBytes })
        }
        for (bundleName, jobs) in restores.sorted(by: { $0.key < $1.key }) {
            try await restore(jobs, from: bundleName, catalog: catalog, summary: &summary)
        }
    }

    private func restore(_ jobs: [FileRecord], from bundleName: String, catalog: BundleCatalog,
                         summary: inout RunSummary) async throws(JournalError) {
        for _ in jobs { progress.began(queue: Self.queue) }
        guard let listed = catalog.bundleFiles[bundleName] else {
            try await fail(jobs, message: "bundle \(bundleName) is not on the remote", summary: &summary)
            return
        }
        let downloaded = LocalFileSystem.join(workDirectory, TemporaryName.for(bundleName))
        defer { try? LocalFileSystem.removeFile(downloaded) }
        do throws(BackendError) {
            try await download(listed, to: downloaded, restoring: jobs, catalog: catalog)
        } catch {
            try await fail(jobs, message: "cannot restore from bundle \(bundleName): \(error.description)",
                           outage: error.suggestsOutage, summary: &summary)
            return
        }

        var targets: [BundleExtractor.Target] = []
        var unknown: [FileRecord] = []
        for job in jobs {
            guard let member = catalog.members[job.path] else {
                unknown.append(job)
                continue
            }
            targets.append(BundleExtractor.Target(path: job.path, member: member, expectedLocal: job.local))
        }
        if !unknown.isEmpty {
            try await fail(unknown, message: "not in bundle \(bundleName)", summary: &summary)
        }
        let local: AnchoredFolder
        do throws(BackendError) {
            local = try BackendError.catching { try AnchoredFolder(pair.localRoot) }
        } catch {
            try await fail(jobs.filter { catalog.members[$0.path] != nil },
                           message: "cannot open the local folder: \(error.description)", summary: &summary)
            return
        }
        let extractor = BundleExtractor(local: local)
        let targetList = targets
        let results = await BlockingIO.run { () -> [String: Result<FileMetadata, BackendError>] in
            extractor.extract(downloaded, bundleName: bundleName, targets: targetList)
        }
        try await book(results, of: jobs, catalog: catalog, summary: &summary)
    }

    /// The bundle downloaded whole into the work folder, once there is room for it and the
    /// files restored from it.
    private func download(_ listed: RemoteEntry, to downloaded: String, restoring jobs: [FileRecord],
                          catalog: BundleCatalog) async throws(BackendError) {
        let observer = JobObserver(queue: Self.queue, progress: progress, throttle: throttle)
        try BackendError.catching {
            try LocalFileSystem.makeDirectories(workDirectory, permissions: 0o700)
            _ = try OpenFile(downloaded, mode: .writeTruncate, permissions: 0o600)
        }
        try BackendError.catching { try LocalFileSystem.makeDirectories(pair.localRoot) }
        // The bundle and the files restored from it, both on the local disk for a while
        // (the state folder is usually on the same disk; where it is not, this errs on
        // the safe side).
        let needed = listed.size + jobs.reduce(0) { $0 + (catalog.members[$1.path]?.size ?? 0) }
        let space = try BackendError.catching { try LocalFileSystem.filesystemSpace(pair.localRoot) }
        if let refusal = freeSpaceReserve.refusal(needed: needed, available: space.available, totalBytes: space.total) {
            throw BackendError(.noSpace, refusal, path: pair.localRoot)
        }
        let result = try await withRetries { () async throws(BackendError) -> DownloadResult in
            try await pair.backend.download(
                DownloadRequest(source: listed.path, partialFile: downloaded, offset: 0, expected: listed), observer: observer)
        }
        guard let meta = try BackendError.catching({ try LocalFileSystem.metadata(downloaded) }), meta.size == result.entry.size else {
            throw BackendError(.io, "the downloaded bundle has the wrong size", path: listed.path.string)
        }
    }

    /// The files extracted are in sync (booked in the journal, reported); the others failed.
    private func book(_ results: [String: Result<FileMetadata, BackendError>], of jobs: [FileRecord], catalog: BundleCatalog,
                      summary: inout RunSummary) async throws(JournalError) {
        var restored: [FileRecord] = []
        var failures: [(FileRecord, BackendError)] = []
        let now = clock.wallTime()
        for job in jobs {
            guard let member = catalog.members[job.path], let result = results[job.path] else { continue }
            switch result {
            case let .success(meta):
                var record = job
                record.markInSync(local: LocalVersion(size: meta.size, modifiedNanos: meta.modifiedNanos, inode: Int64(bitPattern: meta.inode)),
                                  remote: RemoteVersion(size: member.size, modifiedNanos: member.modifiedNanos, etag: nil), at: now,
                                  localChangedNanos: meta.changedNanos)
                restored.append(record)
            case let .failure(error):
                failures.append((job, error))
            }
        }
        try await journal?.bookResults(restored)
        for record in restored {
            progress.ended(queue: Self.queue, succeeded: true)
            summary.downloadedFiles += 1
            summary.downloadedBytes += record.localSize ?? 0
            sink.emit(.transferred(path: record.path, queue: Self.queue, direction: .download,
                                   bytes: record.localSize ?? 0, resumedFrom: 0))
        }
        for (record, error) in failures {
            try await fail([record], message: error.description, summary: &summary)
        }
    }
}
