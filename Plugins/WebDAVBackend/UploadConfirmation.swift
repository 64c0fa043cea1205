import FerryPluginAPI
import Synchronization

/// Whether an upload's stored version can be known without asking the server again.
///
/// After PUT + MOVE the core needs the version the server now holds (size, and an ETag or
/// modification time that later listings will show), so that the next run recognises the
/// file as unchanged. Asking means one PROPFIND per file: a third of the requests of a
/// small-file push. Some servers make the answer predictable: nginx sets a PUT file's
/// modification time from the request's `Date` header (to the second).
///
/// So the first uploads to a server are checked with a PROPFIND, and their predicted
/// version is compared with what the server reports. Once `learningUploads` predictions in
/// a row were right, later uploads trust the prediction; one wrong prediction turns
/// prediction off for the rest of the backend's life.
final class UploadConfirmation: Sendable {
    enum Mode: Equatable, Sendable {
        /// Still comparing predictions with PROPFIND answers; `matches` were right so far.
        case learning(matches: Int)
        /// Predictions are trusted: no PROPFIND after an upload.
        case predicted
        /// Predictions failed once: every upload is followed by a PROPFIND.
        case checked
    }

    static let learningUploads = 3
    private let mode = Mutex<Mode>(.learning(matches: 0))

    var current: Mode { mode.withLock { $0 } }

    /// Whether this upload must be followed by a PROPFIND.
    var needsCheck: Bool { current != .predicted }

    /// What the server should hold after an upload: the size sent, and the modification
    /// time taken from the `Date` header sent (whole seconds).
    static func prediction(path: RelativePath, size: Int64, sentDateNanos: Int64) -> RemoteEntry {
        let seconds = sentDateNanos >= 0 ? sentDateNanos / 1_000_000_000 : (sentDateNanos - 999_999_999) / 1_000_000_000
        return RemoteEntry(path: path, kind: .file, size: size, modifiedNanos: seconds * 1_000_000_000)
    }

    /// Compares a prediction with the server's answer for the same upload and learns from it.
    /// A prediction is right when a later listing of the unchanged file would be taken as
    /// the same version: same size, and the same ETag or (without one on either side) the
    /// same modification time.
    func learn(predicted: RemoteEntry, actual: RemoteEntry) {
        let right = Self.isSameVersion(predicted, actual)
        mode.withLock { mode in
            guard case let .learning(matches) = mode else { return }
            if !right {
                mode = .checked
            } else if matches + 1 >= Self.learningUploads {
                mode = .predicted
            } else {
                mode = .learning(matches: matches + 1)
            }
        }
    }

    /// The journal's rule (`RemoteVersion.isSameVersion`), made strict: something besides the
    /// size must be compared, or a prediction would prove nothing.
    static func isSameVersion(_ predicted: RemoteEntry, _ actual: RemoteEntry) -> Bool {
        guard predicted.size == actual.size else { return false }
        if let etag = predicted.etag, let actualETag = actual.etag { return etag == actualETag }
        if let modified = predicted.modifiedNanos, let actualModified = actual.modifiedNanos { return modified == actualModified }
        return false
    }
}
