import Crypto
import CurlTransport
import FerryPluginAPI
import Foundation

/// Large files go in parts, several at once. The journal keeps a checkpoint of the upload
/// (`MultipartCheckpoint`: its id and each part the store acknowledged, written as the
/// part finishes), for the version of the file it was started for (the core's
/// `mayResume`). The next run continues that very upload: it asks the store which parts
/// it holds (ListParts), reuses a held part whose ETag is the MD5 of the local bytes or the
/// ETag recorded for it, sends the rest, and completes. Without a checkpoint (a crash
/// before the first one was written, an older journal) the upload is found by its key
/// (ListMultipartUploads).
extension S3Backend {
    /// What happened to one part.
    struct PartOutcome: Sendable {
        var number: Int
        var etag: String
        var digest: Data
        var bytesSent: Int64
        /// The store held this part already (sent by an earlier, interrupted run).
        var reused: Int64
    }

    func uploadInParts(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        let path = request.destination
        let key = addressing.key(path)
        let recorded = request.resumeState.flatMap { MultipartCheckpoint(text: $0, key: key) }
        var uploadID: String?
        var partSize = multipart.partSize
        var held: [Int: MultipartAnswers.Part] = [:]
        if let recorded {
            if request.mayResume {
                do {
                    held = try await partsHeld(key: key, uploadID: recorded.uploadID, path: path)
                    uploadID = recorded.uploadID
                    partSize = recorded.partSize
                } catch where error.code == .notFound {
                    // Completed or aborted meanwhile: start a new one.
                }
            } else {
                // Started for another version of the file: its parts are of no use. Other
                // unfinished uploads of the key may be another writer's; the age sweep
                // (`abandoned_uploads_after`) takes the orphans.
                try await abort(key: key, uploadID: recorded.uploadID, path: path)
            }
        } else {
            let existing = try await uploadsInProgress(key: key, path: path)
            if request.mayResume, let latest = existing.max(by: { ($0.initiatedNanos ?? 0) < ($1.initiatedNanos ?? 0) }) {
                do {
                    held = try await partsHeld(key: key, uploadID: latest.uploadID, path: path)
                    uploadID = latest.uploadID
                } catch where error.code == .notFound {
                    // Completed or aborted meanwhile: start a new one.
                }
            }
            for stale in existing where stale.uploadID != uploadID {
                try await abort(key: key, uploadID: stale.uploadID, path: path)
            }
        }
        let plan = MultipartPlan(fileSize: request.size, preferredPartSize: partSize)
        let id: String
        if let uploadID {
            id = uploadID
        } else {
            id = try await createUpload(key: key, request: request)
        }
        let checkpoint = MultipartCheckpoint(key: key, uploadID: id, partSize: plan.partSize)
        if uploadID == nil { await observer.uploadCheckpoint(checkpoint.text) }
        let recordedETags = uploadID == nil ? [:] : recorded?.etags ?? [:]

        let outcomes = try await sendParts(request, plan: plan, checkpoint: checkpoint, held: held, recordedETags: recordedETags,
                                           observer: observer)
        try await checkSource(request)

        var headers = [("Content-Type", "application/xml")]
        // As for a single PUT: a key the listing did not have is created only if it is
        // still free. Refused, the upload stays on the store with its parts, and its
        // checkpoint in the journal.
        if request.expectsNewFile { headers.append(("If-None-Match", "*")) }
        if let replaced = Self.replaceCondition(request) { headers.append(("If-Match", replaced)) }
        let response = try await send(
            "POST", url: addressing.objectURL(key: key, query: S3Query([("uploadId", id)])), headers: headers,
            body: .data(MultipartAnswers.completionBody(outcomes.map { ($0.number, $0.etag) })))
        if request.expectsNewFile, response.status == 412 { throw .anotherWriterCreated(path.description, cause: "HTTP 412 on POST (CompleteMultipartUpload) with If-None-Match: *") }
        if Self.replaceCondition(request) != nil, response.status == 412 {
            throw .anotherWriterReplaced(path.description, cause: "HTTP 412 on POST (CompleteMultipartUpload) with If-Match")
        }
        guard response.isSuccess else { throw failure(response, method: "POST (CompleteMultipartUpload)", path: path) }
        let completion = MultipartAnswers.completion(response.body)
        if let error = completion.error {
            throw error.error(status: 500, method: "POST (CompleteMultipartUpload)", path: path.description, retryAfter: nil,
                              addressing: addressing)
        }
        let expected = Self.multipartETag(outcomes.sorted { $0.number < $1.number }.map(\.digest))
        let etag = completion.etag ?? response.header("etag").map(ETag.normalized)
        if let etag, etag.contains("-"), etag != expected {
            throw BackendError(.protocolViolation, "the store's ETag for the completed upload is not the one its parts make",
                               path: path.description, cause: "ETag \(etag), expected \(expected)", retryable: true)
        }
        let reused = outcomes.reduce(Int64(0)) { $0 + $1.reused }
        return UploadResult(entry: RemoteEntry(path: path, kind: .file, size: request.size, modifiedNanos: request.modifiedNanos,
                                               etag: etag ?? expected),
                            bytesSent: outcomes.reduce(Int64(0)) { $0 + $1.bytesSent }, resumedFrom: reused)
    }

    /// `"HEX(MD5(digest1 ‖ digest2 ‖ …))-N"`, the ETag S3 gives a multipart object.
    static func multipartETag(_ digests: [Data]) -> String {
        var hasher = Insecure.MD5()
        for digest in digests { hasher.update(data: digest) }
        let hex = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        return "\"\(hex)-\(digests.count)\""
    }

    /// Sends the parts the store does not hold, `multipart.concurrency` at a time, and
    /// checkpoints each part sent as it finishes.
    private func sendParts(_ request: UploadRequest, plan: MultipartPlan, checkpoint: MultipartCheckpoint,
                           held: [Int: MultipartAnswers.Part], recordedETags: [Int: String],
                           observer: any TransferObserver) async throws(BackendError) -> [PartOutcome] {
        let backend = self
        let key = checkpoint.key
        let uploadID = checkpoint.uploadID
        let results = await withTaskGroup(of: Result<PartOutcome, BackendError>.self) { group in
            var next = 1
            var outcomes: [Result<PartOutcome, BackendError>] = []
            var recording = checkpoint
            func start() {
                let number = next
                next += 1
                group.addTask {
                    do throws(BackendError) {
                        return .success(try await backend.sendPart(number, request: request, plan: plan, key: key, uploadID: uploadID,
                                                                   held: held[number], recordedETag: recordedETags[number],
                                                                   observer: observer))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            func record(_ result: Result<PartOutcome, BackendError>) async {
                outcomes.append(result)
                guard case let .success(outcome) = result else { return }
                recording.parts.append(MultipartCheckpoint.Part(number: outcome.number, etag: outcome.etag))
                // A reused part was on the store before this run, and the next run asks the
                // store again: a checkpoint for it would be a journal transaction for nothing.
                if outcome.bytesSent > 0 { await observer.uploadCheckpoint(recording.text) }
            }
            while next <= min(plan.partCount, multipart.concurrency) { start() }
            for await result in group {
                await record(result)
                if case .failure = result { break }
                if next <= plan.partCount { start() }
            }
            // After a failure the parts in flight finish (libcurl is not interrupted by
            // task cancellation); what they sent stays on the store for the next run, and
            // in the checkpoint.
            for await result in group { await record(result) }
            return outcomes
        }
        var outcomes: [PartOutcome] = []
        for result in results {
            switch result {
            case let .success(outcome): outcomes.append(outcome)
            case let .failure(error): throw error
            }
        }
        return outcomes
    }

    private func sendPart(_ number: Int, request: UploadRequest, plan: MultipartPlan, key: String, uploadID: String,
                          held: MultipartAnswers.Part?, recordedETag: String?,
                          observer: any TransferObserver) async throws(BackendError) -> PartOutcome {
        let (offset, length) = plan.range(ofPart: number)
        let digest = try await FileDigest.md5(path: request.source, offset: offset, length: length)
        // A store that encrypts (SSE-KMS) gives parts ETags that are not their MD5: the
        // ETag the journal recorded for the part, from this same version of the file,
        // identifies it instead.
        if let held, held.size == length,
           ETag.md5Hex(held.etag) == digest.hex || recordedETag == ETag.normalized(held.etag) {
            return PartOutcome(number: number, etag: held.etag, digest: digest.bytes, bytesSent: 0, reused: length)
        }
        if observer.isCancelled { throw BackendError(.cancelled, "transfer cancelled", path: request.destination.description) }
        let response = try await send(
            "PUT", url: addressing.objectURL(key: key, query: S3Query([("partNumber", String(number)), ("uploadId", uploadID)])),
            headers: [("Content-MD5", digest.base64)],
            body: .file(path: request.source, offset: offset, length: length), observer: observer)
        guard response.isSuccess else { throw failure(response, method: "PUT (UploadPart \(number))", path: request.destination) }
        let etag = response.header("etag").map(ETag.normalized) ?? ETag.normalized(digest.hex)
        if let sent = ETag.md5Hex(etag), sent != digest.hex {
            throw BackendError(.protocolViolation, "the store's ETag for part \(number) is not the MD5 of its bytes",
                               path: request.destination.description, cause: "ETag \(etag), MD5 \(digest.hex)", retryable: true)
        }
        return PartOutcome(number: number, etag: etag, digest: digest.bytes, bytesSent: response.bytesSent, reused: 0)
    }

    private func createUpload(key: String, request: UploadRequest) async throws(BackendError) -> String {
        let response = try await send(
            "POST", url: addressing.objectURL(key: key, query: S3Query([("uploads", "")])),
            headers: [("Content-Type", "application/octet-stream"), ("x-amz-meta-mtime", S3ModificationTime.header(nanos: request.modifiedNanos))],
            body: .data(Data()))
        guard response.isSuccess else { throw failure(response, method: "POST (CreateMultipartUpload)", path: request.destination) }
        return try MultipartAnswers.uploadID(response.body)
    }

    /// The unfinished uploads of exactly this key.
    func uploadsInProgress(key: String, path: RelativePath) async throws(BackendError) -> [MultipartAnswers.Upload] {
        try await uploadsInProgress(prefix: key, path: path).filter { $0.key == key }
    }

    /// Every unfinished upload under a key prefix, page by page.
    func uploadsInProgress(prefix: String, path: RelativePath) async throws(BackendError) -> [MultipartAnswers.Upload] {
        var uploads: [MultipartAnswers.Upload] = []
        var markers: (key: String, id: String)?
        repeat {
            var items = [("uploads", ""), ("prefix", prefix)]
            if let markers { items += [("key-marker", markers.key), ("upload-id-marker", markers.id)] }
            let response = try await send("GET", url: addressing.bucketURL(query: S3Query(items)))
            guard response.status == 200 else { throw failure(response, method: "GET (ListMultipartUploads)", path: path) }
            let page = try MultipartAnswers.uploads(response.body)
            uploads += page.uploads
            if let key = page.nextKeyMarker, let id = page.nextUploadIDMarker, (key, id) != (markers?.key ?? "", markers?.id ?? "") {
                markers = (key, id)
            } else {
                markers = nil
            }
        } while markers != nil && uploads.count < 1_000_000
        return uploads
    }

    /// The parts the store holds for an upload, by number.
    func partsHeld(key: String, uploadID: String, path: RelativePath) async throws(BackendError) -> [Int: MultipartAnswers.Part] {
        var parts: [Int: MultipartAnswers.Part] = [:]
        var marker: Int?
        repeat {
            var items = [("uploadId", uploadID)]
            if let marker { items.append(("part-number-marker", String(marker))) }
            let response = try await send("GET", url: addressing.objectURL(key: key, query: S3Query(items)))
            guard response.status == 200 else { throw failure(response, method: "GET (ListParts)", path: path) }
            let page = try MultipartAnswers.parts(response.body)
            for part in page.parts { parts[part.number] = part }
            marker = page.nextMarker.flatMap { $0 > (marker ?? 0) ? $0 : nil }
        } while marker != nil
        return parts
    }

    func abort(key: String, uploadID: String, path: RelativePath) async throws(BackendError) {
        let response = try await send("DELETE", url: addressing.objectURL(key: key, query: S3Query([("uploadId", uploadID)])))
        guard response.isSuccess || response.status == 404 else {
            throw failure(response, method: "DELETE (AbortMultipartUpload)", path: path)
        }
    }
}
