import FerryPluginAPI
import FerrySystem
import Foundation

/// Uploads: the source is encrypted into a scratch file, checked to be the planned version
/// before and after, and the scratch file is sent by the backend underneath, under the
/// stored name. The way it is sent is the inner backend's: in one trip to a blocking thread
/// where it sends small files so (`DirectUploadBackend`: S3, WebDAV), staged and flushed in
/// batches where it does that (`StagedUploadBackend`: a local disk), else one `upload`.
/// Without that, each small encrypted file cost a flush or two thread trips more than a plain one.
extension EncryptedBackend: DirectUploadBackend, StagedUploadBackend {
    public func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        let keys = try await keysForWriting()
        let stored = try storedRequest(request, keys)
        let (file, size) = try await BlockingIO.run { () throws(BackendError) in try self.encryptNow(request, observer: observer, keys: keys) }
        defer { scratch.remove(file) }
        let result = try await inner.upload(sending(file, size: size, as: stored), observer: observer)
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
        let stored = try storedRequest(request, keys)
        let (file, size) = try encryptNow(request, observer: observer, keys: keys)
        defer { scratch.remove(file) }
        guard let result = try direct.uploadNow(sending(file, size: size, as: stored), observer: observer) else { return nil }
        return plaintext(result, of: request)
    }

    // MARK: Staged

    /// Declines (nil) when the inner backend does not stage.
    public func stageUpload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> StagedUpload? {
        guard let stager = inner as? any StagedUploadBackend else { return nil }
        let keys = try await keysForWriting()
        let stored = try storedRequest(request, keys)
        let (file, size) = try await BlockingIO.run { () throws(BackendError) in try self.encryptNow(request, observer: observer, keys: keys) }
        defer { scratch.remove(file) }
        guard let staged = try await stager.stageUpload(sending(file, size: size, as: stored), observer: observer) else { return nil }
        return StagedUpload(temporary: staged.temporary, result: plaintext(staged.result, of: request))
    }

    /// The inner backend publishes the stored names; each result comes back as plaintext.
    public func publishStaged(_ uploads: [StagedUpload]) async throws(BackendError) -> [Result<UploadResult, BackendError>] {
        guard let stager = inner as? any StagedUploadBackend else {
            throw BackendError(.unsupported, "\(inner.displayName) does not stage uploads")
        }
        let keys = try await keysForWriting()
        var storedUploads: [StagedUpload] = []
        for upload in uploads {
            var result = upload.result
            result.entry.path = try stored(result.entry.path, keys)
            result.entry.size = ContentFormat.ciphertextSize(plaintextSize: result.entry.size)
            storedUploads.append(StagedUpload(temporary: upload.temporary, result: result))
        }
        let published = try await stager.publishStaged(storedUploads)
        return zip(uploads, published).map { upload, outcome in
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

    /// The request as the inner backend gets it, without its source yet: the stored name.
    private func storedRequest(_ request: UploadRequest, _ keys: EncryptionKeys) throws(BackendError) -> UploadRequest {
        var stored = request
        stored.destination = try self.stored(request.destination, keys)
        // Each upload is a fresh ciphertext (a new nonce prefix): nothing to continue.
        stored.mayResume = false
        stored.resumeState = nil
        return stored
    }

    private func sending(_ file: String, size: Int64, as stored: UploadRequest) -> UploadRequest {
        var request = stored
        request.source = file
        request.size = size
        return request
    }

    /// The inner backend's result in the core's terms. The source was its planned version
    /// after the encryption had read all of it, and before the inner upload began.
    private func plaintext(_ result: UploadResult, of request: UploadRequest) -> UploadResult {
        var entry = result.entry
        entry.path = request.destination
        entry.size = request.size
        return UploadResult(entry: entry, bytesSent: request.size, resumedFrom: 0, verifiedSource: true)
    }

    /// Encrypts the source into a scratch file, on the calling thread, which must be a
    /// blocking one. Returns the file, to be handed back to `scratch.remove`, and its size.
    func encryptNow(_ request: UploadRequest, observer: any TransferObserver,
                    keys: EncryptionKeys) throws(BackendError) -> (file: String, size: Int64) {
        let (file, output) = try scratch.fileToOverwrite()
        do {
            let size = try BackendError.catching { () throws -> Int64 in
                let source = try OpenFile(request.source, mode: .read)
                let before = try source.metadata()
                guard before.size == request.size, before.modifiedNanos == request.modifiedNanos else {
                    throw BackendError(.changedDuringTransfer, "source changed since it was scanned", path: request.source)
                }
                let written = try ContentStream.encrypt(source, size: request.size, into: output, keys: keys, observer: observer)
                if try output.metadata().size > written { try output.truncate(to: written) }
                let after = try source.metadata()
                guard after.size == request.size, after.modifiedNanos == request.modifiedNanos,
                      let current = try LocalFileSystem.metadata(request.source), current.inode == before.inode else {
                    throw BackendError(.changedDuringTransfer, "the file changed while it was being encrypted", path: request.source)
                }
                try output.setModificationTime(nanos: request.modifiedNanos)
                return written
            }
            return (file, size)
        } catch {
            scratch.remove(file)
            throw error
        }
    }
}
