import CurlTransport
import FerryPluginAPI
import Foundation

/// Where Ferry keeps modification times as a property (`ModificationTimeProperty`: Apache
/// mod_dav_fs), a small upload that goes in one `PUT` to its name (`putsDirectly`) is
/// staged: the `PUT` takes the transfer's slot, and the two requests that keep the time
/// follow in a batch beside the next files' `PUT`s (`publishStaged`): the `PROPFIND` for
/// the version the server stored, which the property is tied to, and the `PROPPATCH`.
/// With 10 ms per round trip the slot was held three round trips per file where curl
/// holds one.
///
/// Nothing is promised earlier than before: the core books a staged upload only once it
/// is published (`StagedUploadBackend`), so a file is reported done, and a run ends, only
/// once its time is stored, or its failure to store known (which, as before, costs the
/// time and not the upload: the entry then has the server's time). A run killed between
/// the `PUT` and the batch leaves the file under its name, booked as not sent: the next
/// run finds the name taken (`If-None-Match: *`) or sends the file again, as after a kill
/// between the `PUT` and the `PROPPATCH` before.
///
/// The files of one folder in a batch learn their versions from one `Depth: 1` listing of
/// the folder where that is cheaper than a `PROPFIND` each (`FolderSizes`). `PROPPATCH` is
/// one resource per request (RFC 4918 §9.2), so each file keeps its own.
extension WebDAVBackend: StagedUploadBackend {
    /// Requests of one batch in flight at once, beside the transfers' own `PUT`s. Each file
    /// of a batch costs two round trips here where its `PUT` cost one in a transfer slot:
    /// with 8 at once beside 4 transfers, publishing only just kept up with the `PUT`s, and
    /// a push of 600 small files to Apache at 10 ms per answer ended with 0.23 s of
    /// `PROPFIND`s and `PROPPATCH`es after its last `PUT` (a batch still publishing and the
    /// last one waiting for it).
    static let publishRequestsInFlight = 16

    /// What publishing needs besides the staged result, which a wrapper (encryption)
    /// rewrites to the stored name and size: the source's modification time.
    struct PendingTime: Sendable {
        var modifiedNanos: Int64
    }

    /// The `PUT` and the look at the source after it, as `uploadDirectly`; nil (nothing
    /// sent) where the server needs no property for the time or the upload does not go in
    /// one `PUT`, and `upload` then sends it.
    public func stageUpload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> StagedUpload? {
        guard let parent = request.destination.parent else { return nil }
        try await makeDirectory(parent)
        let features = try await serverFeatures(probingIn: parent, tag: request.temporaryTag)
        guard setsModificationTimeProperty(features), putsDirectly(request, features: features) else { return nil }
        try await putDirectly(request, observer: observer)
        let entry = RemoteEntry(path: request.destination, kind: .file, size: request.size, modifiedNanos: request.modifiedNanos)
        // The source was looked at after its last bytes were read: the server holds the
        // planned version (`uploadDirectly`).
        return StagedUpload(temporary: request.destination,
                            result: UploadResult(entry: entry, bytesSent: request.size, resumedFrom: 0, verifiedSource: true),
                            unnamedFile: PendingTime(modifiedNanos: request.modifiedNanos),
                            expectsNewFile: request.expectsNewFile)
    }

    /// Learns the version each staged file is stored as and sets its time for that
    /// version. A file that is not on the server as sent fails on its own (to be sent
    /// again); a time that could not be set leaves the server's. Never throws.
    public func publishStaged(_ uploads: [StagedUpload]) async throws(BackendError) -> [Result<UploadResult, BackendError>] {
        let stored = await storedVersions(uploads.map(\.result.entry))
        return await mapInFlight(Array(zip(uploads, stored)), limit: Self.publishRequestsInFlight) {
            [self] upload, stored -> Result<UploadResult, BackendError> in
            let entry: RemoteEntry
            switch stored {
            case let .success(found): entry = found
            case let .failure(error): return .failure(error)
            }
            var result = upload.result
            result.entry = entry
            if let nanos = (upload.unnamedFile as? PendingTime)?.modifiedNanos ?? upload.result.entry.modifiedNanos {
                result.entry = await keepModificationTime(nanos, on: entry)
            }
            return .success(result)
        }
    }

    /// What the server holds under each of `expected`'s names, in order, checked against
    /// the size sent (as `confirmUpload` checks): from one listing per folder where that
    /// is cheaper, else a `PROPFIND` each.
    func storedVersions(_ expected: [RemoteEntry]) async -> [Result<RemoteEntry, BackendError>] {
        var byFolder: [RelativePath: Int] = [:]
        for entry in expected { if let parent = entry.path.parent { byFolder[parent, default: 0] += 1 } }
        var listed: [RelativePath: RemoteEntry] = [:]
        for (folder, count) in byFolder {
            if folderSizes.listingIsCheaper(folder, files: count), let children = try? await list(folder) {
                for child in children { listed[child.path] = child }
            } else {
                folderSizes.add(count, to: folder)
            }
        }
        return await mapInFlight(expected, limit: Self.publishRequestsInFlight) { [self, listed] expected in
            do throws(BackendError) {
                // Not in the listing (a name the server hides): asked for on its own.
                let found: RemoteEntry?
                if let entry = listed[expected.path] { found = entry } else { found = try await stat(expected.path) }
                guard let found, found.kind == .file else {
                    return .failure(BackendError(.io, "the file is not on the server after the upload",
                                                 path: expected.path.description, retryable: true))
                }
                guard found.size == expected.size else {
                    return .failure(BackendError(.io, "the server stored \(found.size) bytes instead of \(expected.size)",
                                                 path: expected.path.description, retryable: true))
                }
                return .success(found)
            } catch {
                return .failure(error)
            }
        }
    }
}
