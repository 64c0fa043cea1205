import Logging
import Synchronization

/// Whether the store keeps the user metadata Ferry sends (`x-amz-meta-mtime`). Some
/// S3-compatible gateways drop every `x-amz-meta-*` header: each file's modification time
/// is then lost without an error, and a pull sets the time of the upload instead. The
/// first upload of a process is read back once (one `HEAD`); a store that dropped the
/// time is said so once, and no longer claims `mtime` among its capabilities.
final class UserMetadataCheck: Sendable {
    enum Outcome: Sendable, Equatable {
        case unknown
        case checking
        case kept
        case dropped
    }

    private let outcome = Mutex(Outcome.unknown)

    /// True once, for the caller that reads the first upload back.
    func claim() -> Bool {
        outcome.withLock { outcome in
            guard outcome == .unknown else { return false }
            outcome = .checking
            return true
        }
    }

    /// The read-back's answer (`nil`: it could not be made; another upload tries again).
    func record(kept: Bool?, remote: String, path: String) {
        let first = outcome.withLock { outcome -> Bool in
            guard outcome == .checking else { return false }
            outcome = kept.map { $0 ? .kept : .dropped } ?? .unknown
            return kept == false
        }
        guard first else { return }
        Logger(label: "ferry.s3").warning(
            "\(remote) dropped the modification time sent with \(path) (x-amz-meta-mtime): the store keeps no user metadata, so files pulled from it get the time of their upload; a store or gateway that keeps x-amz-meta-* headers keeps the times")
    }

    var dropped: Bool { outcome.withLock { $0 == .dropped } }
}
