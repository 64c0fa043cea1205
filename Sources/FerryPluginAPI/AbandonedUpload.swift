/// An upload a backend holds unfinished: an S3 multipart upload whose parts take space on
/// the store until it is completed or aborted. Reported when one is aborted.
public struct AbandonedUpload: Sendable, Equatable {
    /// Where the upload was going.
    public var path: RelativePath
    /// When the upload was started (nanoseconds since 1970), when the backend knows.
    public var startedNanos: Int64?

    public init(path: RelativePath, startedNanos: Int64?) {
        self.path = path
        self.startedNanos = startedNanos
    }
}
