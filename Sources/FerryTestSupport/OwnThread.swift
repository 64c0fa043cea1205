import Foundation

/// Runs `work` on a thread of its own and returns its result.
///
/// For a test's blocking steps (starting a server script and waiting for it, a tmux call, a
/// slow writer): Swift's cooperative pool has one thread per core (two on the CI machine),
/// and a test that blocks one of them holds back every other test's `await`, so that a
/// step meant to happen "while a push runs" can come after the push ended.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        Thread.detachNewThread { continuation.resume(returning: work()) }
    }
}

/// `onOwnThread` for work that throws.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
