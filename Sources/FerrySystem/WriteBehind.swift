#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps a large file that is being written, and will be synced at the end, on its way to
/// disk: every `window` bytes it starts writing the new window and waits for the one
/// before. Without it nothing reached the disk before the final sync (24 GiB of RAM lets
/// gigabytes stay dirty), so a 1 GiB copy on this VM took its copy time plus as long
/// again in `fsync`; now the two overlap, and at most two windows are dirty at a time.
///
/// A window on disk is also dropped from the page cache. Kept, every large copy took a
/// gigabyte of new pages, and once earlier copies filled the cache the same 1 GiB push
/// took 2–4 s instead of 0.6–0.9 (the kernel's time to find and fill pages it had not
/// touched lately); dropped, the next window reuses the pages. A sync tool that moves a
/// library through the cache would also push out what the user is working on.
public struct WriteBehind: Sendable {
    public static let window: Int64 = 8 << 20

    /// Bytes before this have been handed to the disk.
    private var started: Int64
    /// Bytes before this are on the disk.
    private var waited: Int64
    /// Off after a filesystem that cannot say: the final sync still does all the work.
    private var unsupported = false

    /// `offset`: where the writing starts (after what an earlier attempt left).
    public init(from offset: Int64) {
        started = offset
        waited = offset
    }

    /// Call after each write: the file holds what the copy wrote up to `end`.
    public mutating func written(upTo end: Int64, of file: OpenFile) throws(SystemError) {
        guard !unsupported, end - started >= Self.window else { return }
        do {
            try file.startWriteback(offset: started, length: end - started)
            if started > waited {
                try file.flushRange(offset: waited, length: started - waited)
                file.dropCached(offset: waited, length: started - waited)
            }
        } catch where [EINVAL, ENOSYS, EOPNOTSUPP, ESPIPE].contains(error.code) {
            unsupported = true
            return
        }
        waited = started
        started = end
    }
}
