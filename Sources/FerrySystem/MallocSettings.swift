internal import CFerrySystem

/// How glibc's malloc keeps memory, set once at start.
///
/// How many heaps: each thread that allocates (the blocking-I/O pool, the dispatch
/// workers) may get an arena of its own by default, which keeps memory the thread freed;
/// with two, a first push of 20,000 files peaked at 54 MiB instead of 64 MiB, in the same
/// time.
///
/// Which blocks stay in the heap: planning allocates and frees a page of journal rows
/// (about 1 MiB) many times. Above glibc's starting 128 KiB threshold each was a fresh
/// `mmap`, and every page of it faulted in again: 8% of a 100,000-file no-op push, and
/// 30,000 page faults where 5,000 remain. Keeping blocks up to 4 MiB in the heap, and up
/// to 16 MiB of it free, does not raise the peak.
public enum MallocSettings {
    /// Call before the threads start.
    public static func apply(arenaCount count: Int32) {
        _ = CFerrySystem_limit_malloc_arenas(count)
        _ = CFerrySystem_keep_malloc_blocks(4 << 20, 16 << 20)
    }
}
