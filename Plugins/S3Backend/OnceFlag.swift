import Synchronization

/// A flag that one caller claims, once in the flag's lifetime.
final class OnceFlag: Sendable {
    private let claimed = Mutex(false)

    /// True for the first caller only.
    func claim() -> Bool {
        claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }
}
