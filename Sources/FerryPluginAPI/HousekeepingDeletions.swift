/// Whether a backend may remove its own scratch files (a probe file, a temporary upload
/// left by a refused write) with a deletion request, for the task that runs the current
/// folder. A folder whose `remote_rights` lack `delete` runs with this off: its server may
/// refuse deletions, or a person audits them, and such a file has a temporary name that
/// listings and scans skip and the next upload or probe writes over.
public enum HousekeepingDeletions {
    @TaskLocal public static var allowed = true
}
