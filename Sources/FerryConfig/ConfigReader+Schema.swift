/// Every key config.yml takes, section by section: the reader takes its allowed keys from
/// here, and a test checks docs/config.md against it (a key missing from the document, or
/// documented but not read, fails it). Remote keys come from each backend's options.
extension ConfigReader {
    static let schema: [(section: String, keys: [String])] = [
        ("top level", ["state", "remotes", "folders", "queues", "default_queue", "transfers", "retry", "scan", "archive",
                       "items", "daemon", "history", "limits", "holds"] + daemonSections),
        ("state", ["path"]),
        ("remotes.NAME.encryption", ["key_file", "passphrase_env", "names", "cipher"]),
        ("folders.NAME", ["path", "remote", "remote_path", "mode", "ignore", "conflict", "trash", "hidden_names",
                          "local_limit", "when", "remote_check", "remote_rights", "keep_versions", "keep_days"]),
        ("folders.NAME.trash", ["local", "remote", "keep"]),
        ("folders.NAME.local_limit", ["max_size", "max_files", "evict", "keep_queues"]),
        ("folders.NAME.when", ["network", "network_command", "power", "min_battery"]),
        ("queues[]", ["name", "match", "min_size", "max_size", "concurrency", "conflict"]),
        ("transfers", ["max", "bandwidth", "max_delete", "min_free_space", "compare_max_size"]),
        ("retry", ["attempts", "passes", "base_delay", "factor", "max_delay", "offline_wait"]),
        ("scan", ["follow_symlinks", "ignore"]),
        ("archive", ["match", "older_than", "max_file_size", "bundle_size", "format", "min_files"]),
        ("items", ["stem", "thumbnail_folders", "stem_suffixes"]),
        ("limits", ["remote_depth", "remote_entries"]),
        ("holds", ["replace", "min_files", "content"]),
        ("watch", ["quiet_period", "rescan_interval", "poll_interval", "stop_timeout", "condition_interval"]),
        ("schedule[]", ["every", "cron", "run", "queues"]),
        ("bandwidth", ["all", "remotes", "queues"]),
        ("daemon", ["listen", "api_key_file", "tls_certificate", "tls_key", "allow_non_loopback", "allowed_hosts"]),
        ("history", ["keep", "offline_alert"]),
    ]

    /// The keys of one section of `schema`.
    static func keys(_ section: String) -> [String] {
        schema.first { $0.section == section }?.keys ?? []
    }
}
