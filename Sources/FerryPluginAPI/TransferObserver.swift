/// What a backend reports to while bytes move, and asks whether to slow down or stop.
///
/// The methods are synchronous so that a transfer running on a blocking thread (a libcurl
/// callback, a copy loop) can call them; the returned pause is slept by the caller.
public protocol TransferObserver: Sendable {
    /// Records `count` more bytes moved and returns how long to pause to honour a bandwidth limit.
    func bytesTransferred(_ count: Int) -> Duration
    /// True once the transfer should stop at the next chunk boundary.
    var isCancelled: Bool { get }
    /// Records what an upload needs to be continued after a crash (S3: the multipart
    /// upload's id and every part the store acknowledged), opaque to the core. The core
    /// keeps the latest in the journal before this returns, and hands it back as
    /// `UploadRequest.resumeState`. Calls of one upload come one after the other.
    func uploadCheckpoint(_ state: String) async
}

extension TransferObserver {
    public func uploadCheckpoint(_ state: String) async {}
}

/// An observer that records nothing and never pauses.
public struct NullTransferObserver: TransferObserver {
    public init() {}
    public func bytesTransferred(_ count: Int) -> Duration { .zero }
    public var isCancelled: Bool { false }
}
