import Synchronization

/// A value that test code and the tasks or callbacks it watches share: a class around a
/// `Mutex`, which is not copyable and so cannot be captured by an escaping closure itself.
public final class LockedValue<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ initial: Value) {
        mutex = Mutex(initial)
    }

    public func withLock<T>(_ body: (inout Value) -> T) -> T {
        mutex.withLock { body(&$0) }
    }

    /// The value now.
    public var value: Value { mutex.withLock { $0 } }
}
