#if canImport(Glibc)
import Glibc
#endif

/// How many files the process may hold open at once (`RLIMIT_NOFILE`).
///
/// A local disk's staged uploads each keep their file open until the batch is named
/// (`AnchoredFolder.createUnnamed`): up to about 600 at once. Debian's default soft limit
/// is 1,024, its hard limit 524,288, and only the soft one is raised here, as Go's runtime
/// and systemd's services do; a program that Ferry runs (an exec backend) inherits the
/// raised limit, which matters only to one that uses `select`.
public enum DescriptorLimit {
    /// Raises the soft limit to the hard one, at most `ceiling`; returns the soft limit
    /// then in force.
    public static func raise(upTo ceiling: UInt64 = 65_536) -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        let wanted = min(limit.rlim_max, rlim_t(ceiling))
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(wanted) }
        }
        return UInt64(limit.rlim_cur)
    }
}
