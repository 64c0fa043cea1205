import FerryPluginAPI
import FerrySystem
import Foundation

/// Downloads: the stored file is checked a segment at a time, and only checked plaintext
/// is ever written to the core's partial file.
///
/// - Where the backend underneath reads ranges (`rangedRead`), a file larger than a window
///   is read a window of segments at a time, a few windows in flight, each checked as it
///   arrives, and the plaintext is written window after window, in order. An interrupted
///   download keeps what it wrote, and the next attempt continues at the segment that
///   holds its first missing byte, after reading the header again. Memory: the windows
///   in flight, ciphertext and plaintext (about 12 MiB).
/// - Otherwise (and for small files, where one request is cheapest), the stored file is
///   fetched whole into the scratch folder and decrypted from its first segment.
/// - A server that cannot prove a range is of the listed version (a listing whose times
///   are not the server's, without an ETag) refuses the header's read with a retryable
///   `protocolViolation`; the download then falls back to the whole file.
extension EncryptedBackend {
    /// Windows read at once: enough to keep a connection busy while one is checked.
    static let windowsInFlight = 3

    public func download(_ request: DownloadRequest, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        let keys = try await unlock.keys()
        let source = try stored(request.source, keys)
        var expected = request.expected
        expected.path = source
        expected.size = ContentFormat.ciphertextSize(plaintextSize: request.expected.size)
        let windowBytes = SegmentWindows.segmentsPerWindow * Int64(ContentFormat.segmentSize)
        if inner.capabilities.rangedRead, request.offset > 0 || request.expected.size > windowBytes {
            let header: Data
            do {
                header = try await inner.read(source, range: 0..<Int64(ContentFormat.headerSize), expected: expected,
                                              observer: NullTransferObserver())
            } catch where error.code == .protocolViolation && error.isRetryable || error.code == .unsupported {
                logger.debug("reading \(request.source.string) whole: \(error.description)")
                return try await downloadWhole(request, source: source, expected: expected, keys: keys, observer: observer)
            }
            return try await downloadByWindows(request, source: source, expected: expected, header: header, keys: keys,
                                               observer: observer)
        }
        return try await downloadWhole(request, source: source, expected: expected, keys: keys, observer: observer)
    }

    private func downloadByWindows(_ request: DownloadRequest, source: RelativePath, expected: RemoteEntry, header: Data,
                                   keys: EncryptionKeys, observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        let path = request.source.string
        let header = Array(header)
        let storedPath = source.string
        guard SegmentCipher(keys: keys, header: header, storedPath: storedPath) != nil else {
            throw EncryptionFailure.authentication("not a Ferry encrypted file, or a newer version", path: path)
        }
        let windows = SegmentWindows(plaintextSize: request.expected.size, resumeAt: request.offset)
        let kept = windows.keptBytes
        let output = try await BlockingIO.run { () throws(BackendError) -> OpenFile in
            try BackendError.catching { () throws -> OpenFile in
                let output = try OpenFile(request.partialFile, mode: .writeExisting)
                if try output.metadata().size != kept { try output.truncate(to: kept) }
                return output
            }
        }
        let inner = self.inner
        // Each window is read and checked on its own (two cores check two windows at
        // once); the plaintext is written in order, so the partial file's bytes are
        // always a checked prefix, whatever stops the download.
        func fetch(_ window: SegmentWindows.Window) -> Task<Result<[UInt8], BackendError>, Never> {
            Task {
                do throws(BackendError) {
                    let sealed = try await inner.read(source, range: window.stored, expected: expected, observer: observer)
                    return .success(try await BlockingIO.run { () throws(BackendError) -> [UInt8] in
                        // Made here: `SymmetricKey` is not `Sendable`. One HKDF per window.
                        guard let cipher = SegmentCipher(keys: keys, header: header, storedPath: storedPath) else {
                            throw EncryptionFailure.authentication("not a Ferry encrypted file, or a newer version", path: path)
                        }
                        return try SegmentWindows.open(sealed, window: window, cipher: cipher, path: path)
                    })
                } catch {
                    return .failure(error)
                }
            }
        }
        let pending = windows.makeIterator()
        var inFlight: [(SegmentWindows.Window, Task<Result<[UInt8], BackendError>, Never>)] = []
        var behind = request.flush ? WriteBehind(from: kept) : nil
        do throws(BackendError) {
            while true {
                while inFlight.count < Self.windowsInFlight, let window = pending.next() {
                    inFlight.append((window, fetch(window)))
                }
                guard !inFlight.isEmpty else { break }
                let (window, task) = inFlight.removeFirst()
                let plaintext = try await task.value.get()
                if observer.isCancelled { throw BackendError(.cancelled, "stopped", path: path) }
                behind = try await BlockingIO.run { [behind] () throws(BackendError) -> WriteBehind? in
                    try BackendError.catching { () throws -> WriteBehind? in
                        try output.write(plaintext, count: plaintext.count, at: window.plaintextOffset)
                        var next = behind
                        try next?.written(upTo: window.plaintextOffset + Int64(plaintext.count), of: output)
                        return next
                    }
                }
            }
            if request.flush {
                try await BlockingIO.run { () throws(BackendError) in try BackendError.catching { try output.sync() } }
            }
        } catch {
            // No read outlives the download: the next attempt must not race this one's.
            for (_, task) in inFlight { task.cancel() }
            for (_, task) in inFlight { _ = await task.value }
            // What was checked stays for the next attempt; after a segment that does not
            // authenticate, nothing does.
            if EncryptionFailure.isAuthentication(error) {
                try? await BlockingIO.run { () throws(BackendError) in try BackendError.catching { try output.truncate(to: 0) } }
            }
            throw error
        }
        var entry = request.expected
        entry.path = request.source
        // A listing may not carry the time an upload kept (S3 keeps it in the object's
        // metadata, which only a HEAD or GET shows): the stored file's own entry does,
        // when it is still the version read.
        if let current = try? await inner.stat(source), current.size == expected.size,
           expected.etag == nil || current.etag == expected.etag, let modified = current.modifiedNanos {
            entry.modifiedNanos = modified
        }
        return DownloadResult(entry: entry, bytesReceived: request.expected.size - kept, resumedFrom: kept)
    }

    /// The stored file fetched whole into the scratch folder, then decrypted into the
    /// partial file from its first segment.
    private func downloadWhole(_ request: DownloadRequest, source: RelativePath, expected: RemoteEntry, keys: EncryptionKeys,
                               observer: any TransferObserver) async throws(BackendError) -> DownloadResult {
        let (file, _) = try scratch.newFile()
        defer { scratch.remove(file) }
        let fetched = try await inner.download(DownloadRequest(source: source, partialFile: file, offset: 0, expected: expected, flush: false),
                                               observer: observer)
        let partial = request.partialFile
        let path = request.source.string
        let size = try await BlockingIO.run { () throws(BackendError) -> Int64 in
            try BackendError.catching { () throws -> Int64 in
                let input = try OpenFile(file, mode: .read)
                let output = try OpenFile(partial, mode: .writeExisting)
                do {
                    try output.truncate(to: 0)
                    let size = try ContentStream.decrypt(input, cipherSize: try input.metadata().size, into: output, keys: keys,
                                                         storedPath: source.string, path: path, observer: observer,
                                                         synced: request.flush)
                    if request.flush { try output.sync() }
                    return size
                } catch {
                    // Nothing unchecked stays behind, not even in the partial file.
                    try? output.truncate(to: 0)
                    throw error
                }
            }
        }
        var entry = fetched.entry
        entry.path = request.source
        entry.size = size
        return DownloadResult(entry: entry, bytesReceived: size, resumedFrom: 0)
    }
}
