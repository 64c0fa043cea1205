import FerryPlanning
import FerryPluginAPI

/// Jobs that start together as one batch (`SchedulerState`): remote deletes the backend
/// takes many to a request, small uploads to a local disk, staged in one trip to a
/// blocking thread, small downloads from one, fetched in one trip, and small uploads sent
/// one after the other on one connection, in one trip.
extension TransferExecutor {
    /// The backend stages small uploads (a local disk, or encryption around one).
    var stagesUploads: Bool { firstTripBackend.stager != nil }

    /// The backend fetches files on the calling thread (a local disk).
    var fetchesDirectly: Bool { pair.backend is any DirectDownloadBackend }

    /// Whether a job may start with others as one batch, on a backend that takes batches.
    func joinsBatch(_ record: FileRecord, deletesInBatches: Bool) -> Bool {
        (deletesInBatches && Self.joinsDeleteBatch(record)) || uploadsTogether(record) || downloadsTogether(record)
    }

    /// Runs a batch: its remote deletes in as few requests as the backend takes, its small
    /// uploads in one trip, its small downloads in another, and any other job (an upload's
    /// retry, which looks first) on its own. Each job's outcome, by path.
    func attempt(batch jobs: [(record: FileRecord, observer: JobObserver)]) async -> [String: Result<Success, Failure>] {
        let deletes = jobs.filter { Self.joinsDeleteBatch($0.record) }
        let uploads = jobs.filter { !Self.joinsDeleteBatch($0.record) && (uploadsTogether($0.record) || sendsTogether($0.record)) }
        let downloads = jobs.filter { downloadsTogether($0.record) }
        var outcomes = deletes.isEmpty ? [:] : await deleteRemote(batch: deletes.map(\.record))
        if !uploads.isEmpty {
            for (job, outcome) in zip(uploads, await uploadTogether(uploads)) { outcomes[job.record.path] = outcome }
        }
        if !downloads.isEmpty {
            for (job, outcome) in zip(downloads, await downloadTogether(downloads)) { outcomes[job.record.path] = outcome }
        }
        for job in jobs where outcomes[job.record.path] == nil {
            outcomes[job.record.path] = await attempt(job.record, observer: job.observer)
        }
        return outcomes
    }

    /// Whether a job may go with others in one trip to a blocking thread
    /// (`uploadTogether`): a small file's first upload to a backend that stages uploads (a
    /// local disk), where each file's hand-offs between threads cost more than its staging.
    func uploadsTogether(_ record: FileRecord) -> Bool {
        record.action == .upload && record.transferBytes < Self.resumableSize && firstTripRoute(for: record).stager != nil
    }

    /// Whether a job may go with other small uploads, sent one after the other in one trip
    /// to a blocking thread on one connection (`uploadTogether`): a small file's first
    /// upload to a backend that sends from there (`DirectUploadBackend`). Each file sent
    /// alone went from the connection's thread to the engine and back before the next
    /// could start, waking two threads: 2,000 files of 4 KiB to S3 took 7% longer and 15%
    /// more CPU, which the store's server on the same machine did not get.
    func sendsTogether(_ record: FileRecord) -> Bool {
        guard record.action == .upload, let direct = firstTripRoute(for: record).direct else { return false }
        return record.transferBytes <= min(direct.directUploadLimit, TransferEngine.sentTogetherLimit)
    }

    /// Uploads small files in one trip to a blocking thread: each is looked at as `upload`
    /// does, then the backend sends it (`DirectUploadBackend`), or stages them one after
    /// the other; each has its own outcome. A send that was refused or found another
    /// version is decided again, as for a file sent alone.
    private func uploadTogether(_ jobs: [(record: FileRecord, observer: JobObserver)]) async -> [Result<Success, Failure>] {
        if let writeLease, let loss = await writeLease.loss() {
            return jobs.map { .failure(Self.leaseLost(loss, path: $0.record.path)) }
        }
        let trips = jobs.map { job in (trip: Result { try firstTrip(for: job.record) }, observer: job.observer) }
        let stager = pair.backend as? any StagedUploadBackend
        let looked = await BlockingIO.run { () -> [Result<FirstTrip.Outcome, any Error>] in
            var outcomes: [Result<FirstTrip.Outcome, any Error>] = []
            var staging: [(index: Int, meta: FileMetadata, request: UploadRequest, observer: any TransferObserver)] = []
            for (index, job) in trips.enumerated() {
                outcomes.append(Result {
                    let trip = try job.trip.get()
                    if trip.direct != nil { return try trip.run(observer: job.observer) }
                    let (meta, request) = try trip.look()
                    if let meta, let request, stager != nil { staging.append((index, meta, request, job.observer)) }
                    return (meta, nil)
                })
            }
            guard let stager, !staging.isEmpty else { return outcomes }
            for (entry, staged) in zip(staging, stager.stageNow(staging.map { ($0.request, $0.observer) })) {
                outcomes[entry.index] = staged.map { (entry.meta, $0.map { ($0.result, $0) }) }.mapError { $0 }
            }
            return outcomes
        }
        var outcomes: [Result<Success, Failure>] = []
        outcomes.reserveCapacity(jobs.count)
        for (job, look) in zip(jobs, looked) {
            outcomes.append(await Self.outcome(of: job.record) { () async throws -> Success in
                try await decidingAgainOnChange(job.record) { () async throws -> Success in
                    let (meta, sent) = try look.get()
                    return try await finishUpload(job.record, meta: meta, sent: sent, observer: job.observer)
                }
            })
        }
        return outcomes
    }
}
