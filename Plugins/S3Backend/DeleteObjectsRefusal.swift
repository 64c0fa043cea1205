import Synchronization

/// Whether the store answered DeleteObjects with "not implemented" (some S3-compatible
/// stores do): from then on the backend deletes one key per request, and does not ask
/// again for as long as it lives.
final class DeleteObjectsRefusal: Sendable {
    private let refused = Atomic<Bool>(false)

    var isRefused: Bool { refused.load(ordering: .relaxed) }

    func remember() { refused.store(true, ordering: .relaxed) }
}
