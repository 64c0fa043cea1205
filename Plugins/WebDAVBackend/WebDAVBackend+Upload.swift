import CurlTransport
import FerryPluginAPI
import FerrySystem
import Foundation

/// Uploads: the temporary file `.NAME.ferry-part` beside the target is the upload session.
///
/// 1. Fill the temporary file. On a server whose ranged `PUT` the probe verified:
///    - continue a partial temporary file when the core allows it (`mayResume`) and the
///      last bytes the server holds equal the local file's bytes at the same place;
///    - send files larger than `uploadChunkSize` as a plain `PUT` of the first chunk and
///      ranged `PUT`s of the rest, so an interruption loses at most one chunk (Apache
///      throws away an interrupted plain `PUT`, but keeps what an interrupted ranged
///      `PUT` wrote);
///    - after any ranged `PUT`, check the server's size and last bytes before relying on
///      them; a mismatch after continuing starts the file over from zero.
///    Elsewhere the file goes in one plain `PUT`, from the start.
/// 2. Check that the local file is still the version that was sent.
/// 3. `MOVE` it onto the final name, then confirm size with a `PROPFIND`.
/// 4. Keep the modification time: `X-OC-Mtime` went with every `PUT`; where the server
///    does not honour it but stores dead properties, `PROPPATCH` Ferry's `mtime`.
///
/// Where `putsDirectly` allows it, steps 1-3 are one `PUT` to the final name, the source
/// looked at before its last bytes go out (`directPut(of:)`) and again after.
extension WebDAVBackend {
    /// Bytes compared at the end of a partial or finished temporary file: enough to catch
    /// a torn or misplaced write, cheap enough to do on every continued upload.
    static let verificationWindow: Int64 = 64 * 1024

    /// What filling the temporary file took.
    struct TemporaryFill {
        /// Where this call continued the server's partial file; 0 when it started over.
        var resumedFrom: Int64
        /// File bytes sent by this call.
        var bytesSent: Int64
    }

    public func upload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        guard let parent = request.destination.parent else {
            throw BackendError(.invalidName, "cannot upload onto the remote's root folder")
        }
        let temporary = try parent.appending(TemporaryName.for(request.destination.name, tag: request.temporaryTag))
        try await makeDirectory(parent)
        let features = try await serverFeatures(probingIn: parent, tag: request.temporaryTag)
        if putsDirectly(request, features: features) {
            return try await uploadDirectly(request, features: features, observer: observer)
        }

        let fill = try await fillTemporary(temporary, from: request, rangedPut: features.rangedPut.isSupported,
                                           observer: observer)
        try await checkSourceUnchanged(request, temporary: temporary)
        do {
            // A new name is taken only if it is still free (MOVE with `Overwrite: F`, which
            // every server refuses with 412 when the target exists): another device may
            // have created it since the listing.
            try await move(from: temporary, to: request.destination, overwrite: !request.expectsNewFile)
        } catch where error.code == .alreadyExists && request.expectsNewFile {
            if HousekeepingDeletions.allowed {
                _ = try? await transport.perform(HTTPRequest(method: "DELETE", url: urls.url(temporary, isFolder: false),
                                                             responseBody: .discard))
            }
            throw Self.nameTaken(request.destination, cause: "HTTP 412 on MOVE with Overwrite: F")
        }
        let keepsTime = setsModificationTimeProperty(features)
        // The PROPPATCH is keyed to the stored version's ETag, so it needs the PROPFIND.
        var entry = try await confirmUpload(request, force: keepsTime)
        if keepsTime {
            entry = await keepModificationTime(request.modifiedNanos, on: entry)
        }
        return UploadResult(entry: entry, bytesSent: fill.bytesSent, resumedFrom: fill.resumedFrom)
    }

    /// The final `MOVE` (`Overwrite: F`), or a `PUT` with `If-None-Match: *`, found the
    /// name taken by another writer.
    static func nameTaken(_ path: RelativePath, cause: String) -> BackendError {
        .anotherWriterCreated(path.description, cause: cause)
    }

    /// The largest file that goes in one conditional `PUT` to a name the listing showed
    /// free. The server checks `If-None-Match: *` when the request starts and puts the
    /// body in place when it ends; a second writer that creates the name in between is
    /// written over. With a body this small the two moments are as close as a `MOVE`'s
    /// check and rename; a larger file keeps the temporary name and the `MOVE`.
    static let conditionalPutLimit: Int64 = 64 * 1024

    static let conditionalPutRefusal = "HTTP 412 on PUT with If-None-Match: *"

    /// A `PUT` that asked for a free name (`directPut(of:)`) found it taken.
    static func refusedAsTaken(_ response: HTTPResponse, _ put: HTTPRequest) -> Bool {
        response.status == 412 && put.headers.contains { $0.0 == "If-None-Match" }
    }

    // MARK: One PUT to the final name

    /// Whether `request` goes in one `PUT` to its final name, with no temporary name and no
    /// `MOVE`. The temporary name is what keeps a cut-off upload from the final name; a
    /// server whose own `PUT` does that (the probe's `atomicPut`) makes it redundant, except:
    func putsDirectly(_ request: UploadRequest, features: WebDAVServerFeatures) -> Bool {
        directPut == .auto && features.atomicPut.isSupported
            // A name the listing showed free is taken only if it still is: every server
            // refuses a `MOVE` with `Overwrite: F` onto a taken name, but only some honour
            // `If-None-Match: *` on a PUT (nginx does not; docs/decisions.md, several devices).
            && (!request.expectsNewFile
                || (features.newNameCondition.isSupported && request.size <= Self.conditionalPutLimit))
            // Other devices may write this folder at the same moment (a two-way sync, a
            // versioned folder): their writes are kept apart by the tagged temporary names
            // and the MOVE, as docs/two-way-sync.md describes; not changed here.
            && request.temporaryTag == nil
            && request.replacedETag == nil
            // An earlier attempt may have left its temporary file (a MOVE that failed, then
            // the DELETE after a refused MOVE lost): the usual path writes over it and moves
            // it away; a PUT beside it would leave it for good.
            && !request.followsEarlierAttempt
            && !fillsInRanges(request, features: features)
    }

    /// Whether the upload continues an earlier partial one or goes in chunks: both live in
    /// the temporary file, which is what is continued. A file the core may resume also
    /// goes there, so that the partial file an earlier attempt left is written over rather
    /// than left behind.
    func fillsInRanges(_ request: UploadRequest, features: WebDAVServerFeatures) -> Bool {
        request.mayResume || (features.rangedPut.isSupported && uploadChunkSize > 0 && request.size > uploadChunkSize)
    }

    /// One `PUT` to the final name (`directPut(of:)`), then the same look at the source,
    /// confirmation and modification time as after a `MOVE`.
    func uploadDirectly(_ request: UploadRequest, features: WebDAVServerFeatures,
                        observer: any TransferObserver) async throws(BackendError) -> UploadResult {
        try await putDirectly(request, observer: observer)
        let keepsTime = setsModificationTimeProperty(features)
        var entry = try await confirmUpload(request, force: keepsTime)
        if keepsTime {
            entry = await keepModificationTime(request.modifiedNanos, on: entry)
        }
        return UploadResult(entry: entry, bytesSent: request.size, resumedFrom: 0)
    }

    /// The one `PUT` to the final name (`directPut(of:)`) and the look at the source after it.
    func putDirectly(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) {
        try await sendPut(directPut(of: request), to: request.destination, for: request, observer: observer)
        // The source passed its look when its last bytes were read, so the server holds the
        // planned version, whole. A change since then is reported all the same, as before a
        // MOVE, so that the core sends the newer version now rather than at the next scan.
        guard try Self.sourceIsUnchanged(request) else { throw Self.sourceChanged(request) }
    }

    // MARK: Filling the temporary file

    func fillTemporary(_ temporary: RelativePath, from request: UploadRequest, rangedPut: Bool,
                       observer: any TransferObserver) async throws(BackendError) -> TemporaryFill {
        var sent: Int64 = 0
        if rangedPut, request.mayResume, let offset = try await verifiedPartialSize(of: temporary, for: request) {
            do {
                sent += try await putRanges(of: request, to: temporary, from: offset, observer: observer)
                if try await temporaryIsComplete(temporary, for: request) {
                    return TemporaryFill(resumedFrom: offset, bytesSent: sent)
                }
                // What the server holds is not what was sent: trust none of it.
            } catch where error.code == .protocolViolation {
                // The server refused to continue at this offset (416, or another surprise): start over.
            }
        }
        let firstPart = rangedPut && uploadChunkSize > 0 ? min(request.size, uploadChunkSize) : request.size
        sent += try await putFirstPart(of: request, to: temporary, length: firstPart, observer: observer)
        if firstPart < request.size {
            sent += try await putRanges(of: request, to: temporary, from: firstPart, observer: observer)
            guard try await temporaryIsComplete(temporary, for: request) else {
                throw BackendError(.io, "the server did not store the chunks as sent (size or content differs)",
                                   path: request.destination.description, retryable: true)
            }
        }
        return TemporaryFill(resumedFrom: 0, bytesSent: sent)
    }

    /// A plain `PUT` of the file's first `length` bytes, replacing whatever the temporary
    /// file held. Returns the bytes sent.
    func putFirstPart(of request: UploadRequest, to temporary: RelativePath, length: Int64,
                      observer: any TransferObserver) async throws(BackendError) -> Int64 {
        try await sendPut(plainPut(of: request, to: temporary, length: length), to: temporary, for: request, observer: observer)
        return length
    }

    /// Sends `put`, a `PUT` to `target` of (part of) `request`'s file, creating `target`'s
    /// folder again if the server says it is missing.
    func sendPut(_ put: HTTPRequest, to target: RelativePath, for request: UploadRequest,
                 observer: any TransferObserver) async throws(BackendError) {
        var response = try await transport.perform(put, observer: observer)
        if response.status == 409 || response.status == 404, let parent = target.parent {
            // The folder vanished since it was cached (or the cache was wrong): create it again.
            knownFolders.remove(parent)
            try await makeDirectory(parent)
            response = try await transport.perform(put, observer: observer)
        }
        if Self.refusedAsTaken(response, put) { throw Self.nameTaken(request.destination, cause: Self.conditionalPutRefusal) }
        guard response.isSuccess else {
            throw HTTPErrorMapping.error(status: response.status, method: "PUT", path: request.destination.description,
                                         retryAfter: response.header("retry-after"))
        }
    }

    /// The `PUT` of the file's first `length` bytes to `target`, from the start.
    func plainPut(of request: UploadRequest, to target: RelativePath, length: Int64) -> HTTPRequest {
        HTTPRequest(method: "PUT", url: urls.url(target, isFolder: false),
                    headers: Self.modificationTimeHeaders(request.modifiedNanos),
                    body: .upload(request, offset: 0, length: length),
                    responseBody: .memory(limit: 64 * 1024))
    }

    /// The `PUT` of the whole file to its final name. The source is looked at once its last
    /// bytes are read and before they go out: a source that changed meanwhile has the body
    /// cut off there, which a server with atomic PUT throws away, so a read of a changing
    /// file never lands under the name (as the look before a `MOVE` ensures), and the
    /// upload fails with `changedDuringTransfer`.
    /// A name the listing showed free is asked for with `If-None-Match: *` (`putsDirectly`
    /// sends such a file only to a server that honours it).
    func directPut(of request: UploadRequest) -> HTTPRequest {
        var put = plainPut(of: request, to: request.destination, length: request.size)
        if request.expectsNewFile { put.headers.append(("If-None-Match", "*")) }
        put.lastBodyBytesCheck = { () throws(BackendError) in
            guard try Self.sourceIsUnchanged(request) else { throw Self.sourceChanged(request) }
        }
        return put
    }

    /// Ranged `PUT`s of the file from `offset` to its end, `uploadChunkSize` bytes each (one
    /// when chunking is off). Returns the bytes sent.
    func putRanges(of request: UploadRequest, to temporary: RelativePath, from offset: Int64,
                   observer: any TransferObserver) async throws(BackendError) -> Int64 {
        let chunk = uploadChunkSize > 0 ? uploadChunkSize : max(1, request.size - offset)
        var position = offset
        while position < request.size {
            if observer.isCancelled {
                throw BackendError(.cancelled, "transfer cancelled", path: request.destination.description)
            }
            let end = min(request.size, position + chunk)
            let response = try await transport.perform(HTTPRequest(
                method: "PUT", url: urls.url(temporary, isFolder: false),
                headers: [("Content-Range", "bytes \(position)-\(end - 1)/\(request.size)")]
                    + Self.modificationTimeHeaders(request.modifiedNanos),
                body: .upload(request, offset: position, length: end - position),
                responseBody: .memory(limit: 64 * 1024)), observer: observer)
            if response.status == 404 || response.status == 409 {
                // Someone removed the partial file (or its folder) meanwhile: the next
                // attempt finds no partial file and starts over.
                throw BackendError(.io, "the partial upload vanished from the server", path: request.destination.description,
                                   cause: "HTTP \(response.status) on a ranged PUT", retryable: true)
            }
            guard response.isSuccess else {
                throw HTTPErrorMapping.error(status: response.status, method: "PUT", path: request.destination.description,
                                             retryAfter: response.header("retry-after"))
            }
            position = end
        }
        return request.size - offset
    }

    /// The headers that make some servers keep the source's modification time: nginx
    /// takes a PUT file's time from `Date`, ownCloud and Nextcloud from `X-OC-Mtime` (whole
    /// seconds both); other servers ignore them.
    static func modificationTimeHeaders(_ nanos: Int64) -> [(String, String)] {
        [("Date", HTTPDate.format(nanos: nanos)), ocMtimeHeader(nanos)]
    }

    /// ownCloud and Nextcloud set the file's modification time from this header (whole
    /// seconds); other servers ignore it.
    static func ocMtimeHeader(_ nanos: Int64) -> (String, String) {
        let seconds = nanos >= 0 ? nanos / 1_000_000_000 : (nanos + 1) / 1_000_000_000 - 1
        return ("X-OC-Mtime", String(seconds))
    }

    // MARK: Verifying what the server holds

    /// The size of the server's partial temporary file when it may be continued: shorter
    /// than (or as long as) the local file, and ending with the same bytes. Nil means
    /// start over.
    func verifiedPartialSize(of temporary: RelativePath, for request: UploadRequest) async throws(BackendError) -> Int64? {
        guard request.size > 0, let partial = try await stat(temporary), partial.kind == .file,
              partial.size > 0, partial.size <= request.size else { return nil }
        guard try await remoteBytesMatchLocal(temporary, of: request, range: Self.tail(endingAt: partial.size))
        else { return nil }
        return partial.size
    }

    /// Whether the temporary file has the local file's size and ends with its bytes.
    func temporaryIsComplete(_ temporary: RelativePath, for request: UploadRequest) async throws(BackendError) -> Bool {
        guard let stored = try await stat(temporary), stored.size == request.size else { return false }
        if request.size == 0 { return true }
        return try await remoteBytesMatchLocal(temporary, of: request, range: Self.tail(endingAt: request.size))
    }

    static func tail(endingAt end: Int64) -> Range<Int64> {
        max(0, end - verificationWindow)..<end
    }

    /// Fetches `range` of a remote file with a ranged `GET` and compares it with the same
    /// bytes of the upload. A server that ignores the range (200, or more bytes than
    /// asked) gives false: what it holds cannot be checked cheaply.
    func remoteBytesMatchLocal(_ remote: RelativePath, of request: UploadRequest, range: Range<Int64>) async throws(BackendError) -> Bool {
        let length = Int(range.upperBound - range.lowerBound)
        let response: HTTPResponse
        do {
            response = try await transport.perform(HTTPRequest(
                method: "GET", url: urls.url(remote, isFolder: false),
                headers: [("Range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")],
                responseBody: .memory(limit: length)))
        } catch where error.code == .protocolViolation {
            return false
        }
        guard response.status == 206, response.body.count == length else { return false }
        let local = try await Self.readLocal(request, range: range)
        return local == response.body
    }

    /// The bytes of an upload in `range` (fewer when the file is shorter): its content's, or
    /// its source file's.
    static func readLocal(_ request: UploadRequest, range: Range<Int64>) async throws(BackendError) -> Data {
        try await BlockingIO.run { () throws(BackendError) -> Data in
            let read: (inout [UInt8], Int64) throws(BackendError) -> Int
            if let content = request.content {
                read = { buffer, position throws(BackendError) in try content.read(into: &buffer, count: buffer.count, at: position) }
            } else {
                let file = try BackendError.catching { try OpenFile(request.source, mode: .read) }
                read = { buffer, position throws(BackendError) in try BackendError.catching { try file.read(into: &buffer, at: position) } }
            }
            var result = Data()
            var position = range.lowerBound
            while position < range.upperBound {
                var buffer = [UInt8](repeating: 0, count: Int(range.upperBound - position))
                let count = try read(&buffer, position)
                if count == 0 { break }
                result.append(contentsOf: buffer.prefix(count))
                position += Int64(count)
            }
            return result
        }
    }

    // MARK: Putting the file in place

    /// The source must still be the version that was sent before it goes under its final name.
    func checkSourceUnchanged(_ request: UploadRequest, temporary: RelativePath) async throws(BackendError) {
        guard try Self.sourceIsUnchanged(request) else {
            if HousekeepingDeletions.allowed { try? await delete(temporary) }
            throw Self.sourceChanged(request)
        }
    }

    static func sourceIsUnchanged(_ request: UploadRequest) throws(BackendError) -> Bool {
        if let content = request.content {
            do {
                try content.verifySource()
                return true
            } catch where error.code == .changedDuringTransfer {
                return false
            }
        }
        let source = try BackendError.catching { try LocalFileSystem.metadata(request.source) }
        guard let source else { return false }
        return source.size == request.size && source.modifiedNanos == request.modifiedNanos
    }

    static func sourceChanged(_ request: UploadRequest) -> BackendError {
        BackendError(.changedDuringTransfer, "the file changed while it was being sent", path: request.source)
    }

    /// The file as the server lists it under its final name, with the size that was sent.
    /// What the server holds after the upload. Where `UploadConfirmation` has learnt that
    /// the prediction (the size, and the sent `Date` as modification time) is what a
    /// PROPFIND would say, the prediction is the answer and no request is made, unless `force`.
    func confirmUpload(_ request: UploadRequest, force: Bool) async throws(BackendError) -> RemoteEntry {
        let predicted = UploadConfirmation.prediction(
            path: request.destination, size: request.size, sentDateNanos: request.modifiedNanos)
        if !force && !confirmation.needsCheck { return predicted }
        guard let entry = try await stat(request.destination) else {
            // Where other devices write the same folder (a two-way sync), one may have moved
            // the new file aside right after the MOVE (to compare it with the version it
            // planned to replace, and put it back): the upload landed, and taking it for a
            // failure would make the retry meet its own bytes under another time and keep
            // them twice as a conflict. Alone on the server, a file missing after a MOVE
            // the server confirmed is the server's fault.
            if request.temporaryTag != nil { return predicted }
            throw BackendError(.io, "the file is not on the server after the upload", path: request.destination.description, retryable: true)
        }
        guard entry.size == request.size else {
            throw BackendError(.io, "the server stored \(entry.size) bytes instead of \(request.size)",
                               path: request.destination.description, retryable: true)
        }
        confirmation.learn(predicted: predicted, actual: entry)
        return entry
    }

    /// Sets Ferry's `mtime` property to `nanos` on the uploaded file, for the version `entry` lists,
    /// and returns the entry with that time when the server stored it. The file is
    /// complete and in place by now: a failure here costs the modification time, not the
    /// upload, and the entry then keeps the server's time, which is what gets recorded.
    func keepModificationTime(_ nanos: Int64, on entry: RemoteEntry) async -> RemoteEntry {
        guard let stamp = ModificationTimeProperty.versionStamp(size: entry.size, lastModifiedNanos: entry.modifiedNanos,
                                                                etag: entry.etag) else { return entry }
        var entry = entry
        do {
            if try await setModificationTimeProperty(entry.path, nanos: nanos, versionStamp: stamp).isSupported {
                entry.modifiedNanos = nanos
            }
        } catch {
            return entry
        }
        return entry
    }

    /// `PROPPATCH` of Ferry's `mtime` and `mtime-version` properties: supported when the
    /// server answers 207 with every property set. Credentials refused and passing
    /// failures are thrown.
    func setModificationTimeProperty(_ path: RelativePath, nanos: Int64, versionStamp: String)
        async throws(BackendError) -> WebDAVServerFeatures.Support {
        let body = ModificationTimeProperty.propertyUpdate(nanos: nanos, versionStamp: versionStamp)
        let response = try await transport.perform(HTTPRequest(
            method: "PROPPATCH", url: urls.url(path, isFolder: false),
            headers: [("Content-Type", "application/xml; charset=utf-8")],
            body: .data(Data(body.utf8)), responseBody: .memory(limit: 64 * 1024)))
        guard response.status == 207 else { return .unsupported(try refusal(response, method: "PROPPATCH", path: path)) }
        return PropPatchResponse.allPropertiesSet(response.body)
            ? .supported : .unsupported("the server refused the property in its PROPPATCH answer")
    }
}

/// Encrypted uploads are encrypted as curl sends them, with no scratch copy.
extension WebDAVBackend: ContentUploadBackend {}
