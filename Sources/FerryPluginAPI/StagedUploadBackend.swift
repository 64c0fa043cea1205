/// A backend whose durability costs a flush per file (a local disk: one `fsync` per small
/// file was most of a first push's time) and that can instead flush a batch of uploads
/// at once. An upload is staged (written in full under its temporary name or with no name,
/// not flushed), then a batch is published: flushed once, each put under its name, and the
/// names flushed once. A file never stands under its final name before its bytes are on
/// disk, and the core records a staged upload only after it is published.
///
/// A wrapping backend (encryption) conforms, and stages when what it wraps does.
public protocol StagedUploadBackend: Backend {
    /// Everything `upload` does, except the flush to disk and the rename into place; or
    /// nil, having written nothing, when this backend cannot stage this upload (a wrapper
    /// around one that does not stage), and the caller then sends it with `upload`.
    func stageUpload(_ request: UploadRequest, observer: any TransferObserver) async throws(BackendError) -> StagedUpload?

    /// `stageUpload` on the calling thread, which must be a blocking one, so the core looks
    /// at a small file and stages it in one trip to a blocking thread (`BlockingIO`), as
    /// `DirectUploadBackend` does for sending; or nil, having written nothing, and the
    /// caller then uses `stageUpload`. The default is nil.
    func stageNow(_ request: UploadRequest, observer: any TransferObserver) throws(BackendError) -> StagedUpload?

    /// `stageNow` for several uploads, one after the other on the calling thread (a
    /// blocking one): one result per upload, in order. A backend may share work between
    /// them (a local disk opens a folder once for the uploads into it). The default stages
    /// them one by one.
    func stageNow(_ uploads: [(request: UploadRequest, observer: any TransferObserver)]) -> [Result<StagedUpload?, BackendError>]

    /// Makes staged uploads durable under their final names, one result per upload in
    /// `uploads`' order. Throws only when none could be published.
    func publishStaged(_ uploads: [StagedUpload]) async throws(BackendError) -> [Result<UploadResult, BackendError>]

    /// `publishStaged` with the last flush left to the next batch: the flush of this
    /// batch's bytes also flushes `earlier`'s names, whose files are durable once this
    /// returns; this batch's names are durable only once a later call is given the names
    /// returned, or `flushNames` has taken them. Throws only when none could be published,
    /// and then `earlier`'s names may not be on disk either. The default publishes durably
    /// (`publishStaged`) and has no names left to flush.
    func publishStaged(_ uploads: [StagedUpload], after earlier: UnflushedNames?) async throws(BackendError)
        -> (results: [Result<UploadResult, BackendError>], names: UnflushedNames)

    /// Flushes names a batch left (`publishStaged(_:after:)`); their files are durable once
    /// this returns.
    func flushNames(_ names: UnflushedNames) async throws(BackendError)
}

/// Files a batch put under their names that may not be on disk yet, and what the backend
/// needs to flush them (a local disk: one folder on each filesystem written to), which
/// only the backend that published them looks into.
public struct UnflushedNames: Sendable {
    public var pending: (any Sendable)?

    public init(_ pending: (any Sendable)?) {
        self.pending = pending
    }

    /// Nothing left to flush.
    public static let none = UnflushedNames(nil)
}

extension StagedUploadBackend {
    public func stageNow(_ request: UploadRequest, observer: any TransferObserver) throws(BackendError) -> StagedUpload? { nil }

    public func stageNow(_ uploads: [(request: UploadRequest, observer: any TransferObserver)]) -> [Result<StagedUpload?, BackendError>] {
        uploads.map { upload in Result { () throws(BackendError) in try stageNow(upload.request, observer: upload.observer) } }
    }

    public func publishStaged(_ uploads: [StagedUpload], after earlier: UnflushedNames?) async throws(BackendError)
        -> (results: [Result<UploadResult, BackendError>], names: UnflushedNames) {
        if let earlier { try await flushNames(earlier) }
        return (try await publishStaged(uploads), .none)
    }

    public func flushNames(_ names: UnflushedNames) async throws(BackendError) {}
}

/// An upload written under its temporary name, or with no name yet, waiting to be published.
public struct StagedUpload: Sendable {
    /// The temporary name the bytes wait under, beside `result.entry.path`; with
    /// `unnamedFile`, the name the backend may use while publishing.
    public var temporary: RelativePath
    /// What the upload will be once published.
    public var result: UploadResult
    /// The open file holding the bytes when the backend wrote them with no name (a local
    /// disk's `O_TMPFILE`), which only the backend that staged them looks into; a wrapper
    /// passes it on. Dropped unpublished, the bytes are gone and no temporary file is left.
    public var unnamedFile: (any Sendable)?
    /// The request's `expectsNewFile`: publishing refuses a name another writer took
    /// meanwhile (`alreadyExists`) instead of replacing that file.
    public var expectsNewFile: Bool

    public init(temporary: RelativePath, result: UploadResult, unnamedFile: (any Sendable)? = nil, expectsNewFile: Bool = false) {
        self.temporary = temporary
        self.result = result
        self.unnamedFile = unnamedFile
        self.expectsNewFile = expectsNewFile
    }
}
