import FerryPluginAPI
import FerrySystem
import Foundation

/// Uploads. To a backend that takes content (`ContentUploadBackend`: the local disk,
/// WebDAV) the source is encrypted as the backend reads it (`EncryptedContent`); to the
/// others (S3, which hashes a body before sending it; exec plugins, which read a path) it is
/// encrypted into a scratch file first, checked to be the planned version before and after.
/// Either way the upload goes the way the inner backend sends small files: in one trip to a
/// blocking thread where it sends them so (`DirectUploadBackend`: S3, WebDAV), staged and
/// flushed in batches where it does that (`StagedUploadBackend`: a local disk), else one
/// `upload`. Without that, each small encrypted file cost a flush or two thread trips more
/// than a plain one. Small files are always encrypted afresh; a large one continues an
/// interrupted attempt where the backend underneath can (`EncryptedUploadCheckpoint`).
extension EncryptedBackend: DirectUploadBackend, StagedUploadBackend {
    /// A large upload can be continued where the backend underneath continues its own
    /// (`EncryptedUploadCheckpoint`): the header goes into the journal before a byte is
    /// sent, and an attempt that continues encrypts with it again.
    public func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        let keys = try await keysForWriting()
        // Asked, not read: a WebDAV server's ranged PUT is known only once probed.
        let innerResumes = try await inner.discoverCapabilities().resumableUpload
        let start = EncryptedUploadStart(request, innerResumes: innerResumes)
        let (sent, header) = try await outgoing(request, keys: keys, start: start, observer: observer)
        defer { release(sent) }
        if !start.continues, innerResumes {
            await observer.uploadCheckpoint(EncryptedUploadCheckpoint(header: header, inner: nil).encoded)
        }
        let result = try await inner.upload(sent, observer: EncryptedCheckpointObserver(base: observer, header: header))
        return plaintext(result, of: request)
    }

    // MARK: Direct

    /// What the inner backend sends directly: its limit holds for the ciphertext, which
    /// is larger, and `uploadNow` declines a file whose ciphertext is over it.
    public var directUploadLimit: Int64 { (inner as? any DirectUploadBackend)?.directUploadLimit ?? 0 }

    /// Declines (nil) when the inner backend does not send directly or declines, or before
    /// an upload has unlocked the keys.
    public func uploadNow(_ request: UploadRequest, observer: any TransferObserver) throws(BackendError) -> UploadResult? {
        guard let direct = inner as? any DirectUploadBackend, let keys = writingKeys.withLock({ $0 }),
              ContentFormat.ciphertextSize(plaintextSize: request.size) < direct.directUploadLimit else { return nil }
        let (sent, _) = try outgoingNow(request, keys: keys, start: nil, observer: observer)
        defer { release(sent) }
        guard let result = try direct.uploadNow(sent, observer: observer) else { return nil }
        return plaintext(result, of: request)
    }

    // MARK: Staged

    /// Declines (nil) when the inner backend does not stage.
    public func stageUpload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> StagedUpload? {
        guard let stager = inner as? any StagedUploadBackend else { return nil }
        let keys = try await keysForWriting()
        let (sent, _) = try await outgoing(request, keys: keys, start: nil, observer: observer)
        defer { release(sent) }
        guard let staged = try await stager.stageUpload(sent, observer: observer) else { return nil }
        return StagedUpload(temporary: staged.temporary, result: plaintext(staged.result, of: request),
                            unnamedFile: staged.unnamedFile, expectsNewFile: staged.expectsNewFile)
    }

    /// `stageUpload` on a blocking thread; declines (nil) when the inner backend does not
    /// stage there or declines, or before an upload has unlocked the keys.
    public func stageNow(_ request: UploadRequest, observer: any TransferObserver) throws(BackendError) -> StagedUpload? {
        guard let stager = inner as? any StagedUploadBackend, let keys = writingKeys.withLock({ $0 }) else { return nil }
        let (sent, _) = try outgoingNow(request, keys: keys, start: nil, observer: observer)
        defer { release(sent) }
        guard let staged = try stager.stageNow(sent, observer: observer) else { return nil }
        return StagedUpload(temporary: staged.temporary, result: plaintext(staged.result, of: request),
                            unnamedFile: staged.unnamedFile, expectsNewFile: staged.expectsNewFile)
    }

    /// The inner backend publishes the stored names; each result comes back as plaintext.
    public func publishStaged(_ uploads: [StagedUpload]) async throws(BackendError) -> [Result<UploadResult, BackendError>] {
        let (results, names) = try await publishStaged(uploads, after: nil)
        try await flushNames(names)
        return results
    }

    /// As `publishStaged`, with the inner backend's last flush left to the next batch.
    public func publishStaged(_ uploads: [StagedUpload], after earlier: UnflushedNames?) async throws(BackendError)
        -> (results: [Result<UploadResult, BackendError>], names: UnflushedNames) {
        let stager = try innerStager()
        let keys = try await keysForWriting()
        var storedUploads: [StagedUpload] = []
        for upload in uploads {
            var result = upload.result
            result.entry.path = try stored(result.entry.path, keys)
            result.entry.size = ContentFormat.ciphertextSize(plaintextSize: result.entry.size)
            storedUploads.append(StagedUpload(temporary: upload.temporary, result: result, unnamedFile: upload.unnamedFile,
                                              expectsNewFile: upload.expectsNewFile))
        }
        let (published, names) = try await stager.publishStaged(storedUploads, after: earlier)
        return (plaintext(published, of: uploads), names)
    }

    public func flushNames(_ names: UnflushedNames) async throws(BackendError) {
        try await innerStager().flushNames(names)
    }

    private func innerStager() throws(BackendError) -> any StagedUploadBackend {
        guard let stager = inner as? any StagedUploadBackend else {
            throw BackendError(.unsupported, "\(inner.displayName) does not stage uploads")
        }
        return stager
    }

    /// Published results with the plaintext name and size of each upload.
    private func plaintext(_ published: [Result<UploadResult, BackendError>],
                           of uploads: [StagedUpload]) -> [Result<UploadResult, BackendError>] {
        zip(uploads, published).map { upload, outcome in
            outcome.map { result in
                var result = result
                result.entry.path = upload.result.entry.path
                result.entry.size = upload.result.entry.size
                return result
            }
        }
    }

    // MARK: Parts

    func keysForWriting() async throws(BackendError) -> EncryptionKeys {
        let keys = try await unlock.keys(writing: true)
        writingKeys.withLock { $0 = keys }
        return keys
    }

    /// The request as the inner backend gets it: the stored name, and the encrypted bytes as
    /// content or in a scratch file (handed back with `release`); and the header they were
    /// encrypted with. `start` nil: a small file, sent afresh (never continued).
    private func outgoing(_ request: UploadRequest, keys: EncryptionKeys, start: EncryptedUploadStart?,
                          observer: any TransferObserver) async throws(BackendError) -> (request: UploadRequest, header: [UInt8]) {
        // Content touches no file until the backend reads it.
        if inner is any ContentUploadBackend { return try outgoingNow(request, keys: keys, start: start, observer: observer) }
        return try await BlockingIO.run { () throws(BackendError) in
            try self.outgoingNow(request, keys: keys, start: start, observer: observer)
        }
    }

    /// The same on the calling thread, which must be a blocking one when the inner backend
    /// takes no content (the file is encrypted into scratch here).
    private func outgoingNow(_ request: UploadRequest, keys: EncryptionKeys, start: EncryptedUploadStart?,
                             observer: any TransferObserver) throws(BackendError) -> (request: UploadRequest, header: [UInt8]) {
        guard ContentFormat.segmentCount(plaintextSize: request.size) <= Int64(UInt32.max) else {
            throw BackendError(.unsupported, "the file is too large to encrypt", path: request.source)
        }
        var sent = request
        sent.destination = try stored(request.destination, keys)
        // Only an upload that encrypts with the earlier attempt's header makes the bytes
        // that attempt left; any other is a fresh ciphertext.
        sent.mayResume = start?.continues ?? false
        sent.resumeState = start?.innerState
        let content = EncryptedContent(source: request.source, size: request.size, modifiedNanos: request.modifiedNanos,
                                       keys: keys, cipher: settings.cipher.contentCipher,
                                       storedPath: sent.destination.string, header: start?.header)
        if inner is any ContentUploadBackend {
            sent.content = content
            sent.size = content.size
        } else {
            let (file, size) = try encryptNow(content, request, observer: observer)
            sent.source = file
            sent.size = size
        }
        return (sent, content.header)
    }

    private func release(_ sent: UploadRequest) {
        if sent.content == nil { scratch.remove(sent.source) }
    }

    /// The inner backend's result in the core's terms. The source was its planned version
    /// after the encryption had read all of it, and before the inner upload began.
    private func plaintext(_ result: UploadResult, of request: UploadRequest) -> UploadResult {
        var entry = result.entry
        entry.path = request.destination
        entry.size = request.size
        let resumedFrom = min(request.size, ContentFormat.plaintextOffset(storedOffset: result.resumedFrom))
        return UploadResult(entry: entry, bytesSent: request.size - resumedFrom, resumedFrom: resumedFrom, verifiedSource: true)
    }

    /// `content` written into a scratch file, on the calling thread, which must
    /// be a blocking one. Returns the file, to be handed back to `scratch.remove`, and its size.
    private func encryptNow(_ content: EncryptedContent, _ request: UploadRequest,
                            observer: any TransferObserver) throws(BackendError) -> (file: String, size: Int64) {
        let (file, output) = try scratch.fileToOverwrite()
        do {
            try ChunkedCopy.copy(from: content, at: 0, to: output, at: 0, count: content.size, observer: observer,
                                 sourceName: request.source)
            try content.verifySource()
            try BackendError.catching {
                if try output.metadata().size > content.size { try output.truncate(to: content.size) }
                try output.setModificationTime(nanos: request.modifiedNanos)
            }
            return (file, content.size)
        } catch {
            scratch.remove(file)
            throw error
        }
    }
}
