import Dispatch

/// Runs blocking system calls (file I/O, libcurl, libarchive) off Swift's cooperative
/// thread pool, whose few threads must never wait on the kernel.
public enum BlockingIO {
    private static let queue = DispatchQueue(label: "ferry.blocking-io", attributes: .concurrent)

    public static func run<T: Sendable, E: Error>(
        _ body: @escaping @Sendable () throws(E) -> T
    ) async throws(E) -> T {
        let result: Result<T, E> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(E) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }
}
