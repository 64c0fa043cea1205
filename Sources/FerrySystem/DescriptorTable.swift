#if canImport(Glibc)
import Glibc
#endif

/// The kernel's table of this process's open files, grown once at start.
///
/// The table starts with room for 64 descriptors and doubles when one past its end is
/// opened. While threads share it, each growth waits for an RCU grace period
/// (`synchronize_rcu` in the kernel's `expand_fdtable`), and every other open in the
/// process waits behind it. A local disk's staged uploads hold up to about 600 files open
/// (`DescriptorLimit`): in a first push of 2,000 small files the opens that grew the table
/// past 256 and 512 took 15 ms and 8 ms, in the middle of the transfers. A process with
/// one thread grows it with no wait.
public enum DescriptorTable {
    /// Grows the table to hold descriptors `0..<count` (at most the soft `RLIMIT_NOFILE`).
    /// Call before any thread starts; tables never shrink, so this costs a few KiB.
    public static func reserve(_ count: Int32) {
        let source = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard source >= 0 else { return }
        defer { close(source) }
        // The lowest free descriptor from `count - 1` up: the table grows to hold it.
        let copy = fcntl(source, F_DUPFD_CLOEXEC, count - 1)
        if copy >= 0 { close(copy) }
    }
}
