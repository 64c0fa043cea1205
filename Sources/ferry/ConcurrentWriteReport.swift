import ExecBackend
import FerryPluginAPI
import LocalBackend
import S3Backend
import WebDAVBackend

/// What `ferry plugins --probe` says about several devices writing to one remote at once:
/// how a new name is taken only while free, how a version is replaced only while it is the
/// one planned, and how a device learns what the others changed (docs/two-way-sync.md,
/// "Several devices").
enum ConcurrentWriteReport {
    /// `conditionalWrites`: an S3 store's answer to `If-None-Match: *` (nil elsewhere).
    static func lines(for backend: any Backend, capabilities: BackendCapabilities, conditionalWrites: Bool?) -> [(key: String, text: String)] {
        let newNames: String
        switch backend {
        case is LocalBackend: newNames = "a rename that never replaces (renameat2 RENAME_NOREPLACE, or linkat)"
        case is WebDAVBackend:
            newNames = "the final MOVE with Overwrite: F, which the server checks before it renames, not in the same step"
        case is S3Backend:
            newNames = conditionalWrites == true
                ? "If-None-Match: * on PUT and CompleteMultipartUpload"
                : "none: the store ignores If-None-Match, so two devices uploading one new name at once keep the later"
        case is ExecBackend: newNames = "the plugin's new_file (docs/plugin-protocol.md); a plugin that ignores it keeps the later"
        default: newNames = "as the backend's upload"
        }
        let compared = capabilities.listingHasETags ? "size and ETag" : "size and modification time"
        let replaced = capabilities.serverSideMove
            ? "moved aside with one move, compared (\(compared)), put back and decided again if another device wrote it"
            : "no server-side move: replaced without a check"
        let markers = "change markers in .ferry-catalog/" + (capabilities.listingOmitsHiddenNames
            ? " (read by name: this server leaves names starting with '.' out of listings, and cataloged hidden files are looked at one by one)"
            : "")
        let lease = capabilities.conditionalNewNames && capabilities.atomicMove
            ? "not needed: the store keeps concurrent writers apart"
            : "two-way syncs and pushes into folders that keep versions write one device at a time, "
                + "holding .ferry-catalog/WRITER.lease "
                + "(renewed while they write; a crashed holder's is outlived after 2 minutes)"
        return [("new_names", newNames), ("replaced_versions", replaced), ("changes_from_other_devices", markers),
                ("write_lease", lease)]
    }
}
