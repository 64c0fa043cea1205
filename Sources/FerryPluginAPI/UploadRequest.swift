/// One file to send: from a local path to a path on the backend.
public struct UploadRequest: Sendable {
    /// Absolute path of the local source file.
    public var source: String
    public var destination: RelativePath
    /// The size and modification time the source had when the job was planned; a source
    /// that no longer matches is reported as `changedDuringTransfer`.
    public var size: Int64
    public var modifiedNanos: Int64
    /// The core has checked that an earlier partial upload of this destination came from
    /// this same version of the source, so the backend may continue it.
    public var mayResume: Bool
    /// The remote listing had nothing at `destination`: a backend that can make the write
    /// conditional (S3's `If-None-Match: *`) refuses to replace a file another writer
    /// created meanwhile, with `alreadyExists`, instead of overwriting it silently.
    public var expectsNewFile: Bool
    /// The ETag the listing gave the file this write replaces, set where that version must
    /// not be overwritten unseen (a folder that keeps every version, on a store without an
    /// atomic move): a backend that can make the write conditional (S3's `If-Match`)
    /// refuses it with `alreadyExists` when another writer replaced the file meanwhile.
    public var replacedETag: String?
    /// The last checkpoint (`TransferObserver.uploadCheckpoint`) the journal holds for an
    /// earlier upload to `destination`: what the backend needs to continue it when
    /// `mayResume`, or to discard it (the version changed) when not.
    public var resumeState: String?
    /// Set when other devices may upload to the same remote folder at the same moment (a
    /// two-way sync): a name of this device, the same on every run, that a backend puts
    /// into its temporary file's name (`TemporaryName.for(_:tag:)`), so that two devices
    /// never write one temporary file and an interrupted upload is still continued.
    public var temporaryTag: String?
    /// An earlier attempt at this upload did not end in a recorded success (a retry, or a
    /// job decided again after its upload was refused): it may have left a temporary file
    /// on the remote, which a backend that uses one writes over and moves away, as its
    /// usual path does, rather than sending around it.
    public var followsEarlierAttempt = false
    /// Set only for a `ContentUploadBackend`: the `size` bytes to send come from here, not
    /// from `source`, which then only names the file in messages and is not looked at
    /// (`content.verifySource()` is the look); `modifiedNanos` is still the time to keep.
    /// Content is its own bytes: a backend never continues an earlier upload with it
    /// without checking that what is stored matches.
    public var content: (any UploadContent)?

    public init(source: String, destination: RelativePath, size: Int64, modifiedNanos: Int64, mayResume: Bool,
                expectsNewFile: Bool = false, resumeState: String? = nil) {
        self.source = source
        self.destination = destination
        self.size = size
        self.modifiedNanos = modifiedNanos
        self.mayResume = mayResume
        self.expectsNewFile = expectsNewFile
        self.resumeState = resumeState
    }
}

/// What an upload did.
public struct UploadResult: Sendable {
    /// The file as it now stands on the backend.
    public var entry: RemoteEntry
    /// Bytes actually sent by this call (less than the size when it resumed).
    public var bytesSent: Int64
    /// Where the upload continued from; 0 for a fresh one.
    public var resumedFrom: Int64
    /// The stored copy is the requested version of the source, so the caller need not look
    /// at the source again: the backend checked the source's size and modification time
    /// after reading all of it, and either the store checked the bytes it received against
    /// that reading's hash (S3's `Content-MD5`), or the check came before the copy went
    /// under its final name (a write to the source in between changes its modification
    /// time), or the check came before the last bytes went out, to a store that keeps a
    /// request's body whole or not at all (WebDAV's direct `PUT`). A change after this is
    /// the next scan's to find, as for any upload.
    public var verifiedSource: Bool

    public init(entry: RemoteEntry, bytesSent: Int64, resumedFrom: Int64, verifiedSource: Bool = false) {
        self.entry = entry
        self.bytesSent = bytesSent
        self.resumedFrom = resumedFrom
        self.verifiedSource = verifiedSource
    }
}
