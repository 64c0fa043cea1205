import ArchiveCodec
import FerryEncryption
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation
import Yams

/// Walks the YAML tree of config.yml section by section. Each `read…` checks the node's
/// shape and keys and throws a `ConfigError` pointing at the offending node.
struct ConfigReader {
    let file: String
    let baseDirectory: String
    let registry: BackendRegistry
    var config = Config.defaults

    init(file: String, baseDirectory: String, registry: BackendRegistry) {
        self.file = file
        self.baseDirectory = baseDirectory
        self.registry = registry
        config.sourceFile = file
    }

    func finish() -> Config { config }

    mutating func read(_ root: Node) throws(ConfigError) -> Config {
        let top = try mapping(root, key: nil, allowed: Self.keys("top level"))
        var folderNode: Node?
        var defaultQueueNode: Node?
        var daemonEntries: [Entry] = []
        for entry in top {
            switch entry.key {
            case "state": try readState(entry.value)
            case "remotes": try readRemotes(entry.value)
            case "folders": folderNode = entry.value
            case "queues": try readQueues(entry.value)
            case "default_queue": defaultQueueNode = entry.value
            case "transfers": try readTransfers(entry.value)
            case "retry": try readRetry(entry.value)
            case "scan": try readScan(entry.value)
            case "archive": try readArchive(entry.value)
            case "items": try readItems(entry.value)
            case "daemon": try readControl(entry.value)
            case "history": try readHistory(entry.value)
            case "limits": try readLimits(entry.value)
            case "holds": try readHolds(entry.value)
            case _ where Self.daemonSections.contains(entry.key): daemonEntries.append(entry)
            default: break
            }
        }
        // Folders and the default queue refer to remotes and queues: read them last.
        if let defaultQueueNode {
            let name = try string(defaultQueueNode, key: "default_queue")
            guard config.queues.contains(where: { $0.name == name }) else {
                throw error(defaultQueueNode, "default_queue",
                            "no queue named '\(name)' (queues: \(config.queues.map(\.name).joined(separator: ", ")))")
            }
            config.defaultQueue = name
        } else if !config.queues.contains(where: { $0.name == config.defaultQueue }) {
            config.defaultQueue = config.queues.last?.name ?? "default"
        }
        if let folderNode { try readFolders(folderNode) }
        // They name folders, remotes and queues.
        try readDaemonSections(daemonEntries)
        return config
    }

    // MARK: Sections

    private mutating func readState(_ node: Node) throws(ConfigError) {
        for entry in try mapping(node, key: "state", allowed: Self.keys("state")) {
            config.statePath = try path(entry.value, key: "state.path")
        }
    }

    private mutating func readRemotes(_ node: Node) throws(ConfigError) {
        for entry in try mapping(node, key: "remotes", allowed: nil) {
            let key = "remotes.\(entry.key)"
            let fields = try mapping(entry.value, key: key, allowed: nil)
            guard let typeEntry = fields.first(where: { $0.key == "type" }) else {
                if let nearMiss = fields.first(where: { Self.nearest($0.key, among: ["type"]) != nil }) {
                    throw error(nearMiss.keyNode, key + "." + nearMiss.key, "unknown key; did you mean 'type'?")
                }
                throw error(entry.value, key, "missing required key 'type' (one of: \(registry.typeNames.joined(separator: ", ")))")
            }
            let type = try string(typeEntry.value, key: key + ".type")
            guard let plugin = registry.plugin(forType: type) else {
                throw error(typeEntry.value, key + ".type",
                            "unknown remote type '\(type)' (known: \(registry.typeNames.joined(separator: ", ")))")
            }
            var options: [String: String] = [:]
            var encryption: EncryptionSettings?
            for field in fields where field.key != "type" {
                if field.key == "encryption" {
                    encryption = try encryptionSettings(field.value, key: key + ".encryption")
                    continue
                }
                guard let option = plugin.options.first(where: { $0.name == field.key }) else {
                    if plugin.acceptsOtherOptions {
                        options[field.key] = try string(field.value, key: key + "." + field.key)
                        continue
                    }
                    let names = ["type"] + plugin.options.map(\.name)
                    if Self.secretKeys.contains(field.key.lowercased()) {
                        let ways = ["password_env", "password_file", "token_env"].filter(names.contains)
                        throw error(field.keyNode, key + "." + field.key, "secrets do not go in config.yml; "
                            + (ways.isEmpty ? "this remote type takes none" : "use \(ways.joined(separator: " or ")) (see docs/config.md)"))
                    }
                    if let near = Self.nearest(field.key, among: names) {
                        throw error(field.keyNode, key + "." + field.key, "unknown key for a '\(type)' remote; did you mean '\(near)'?")
                    }
                    throw error(field.keyNode, key + "." + field.key,
                                "unknown key for a '\(type)' remote (expected one of: \(names.joined(separator: ", ")))")
                }
                options[field.key] = try optionValue(field.value, option: option, key: key + "." + field.key)
            }
            for option in plugin.options where option.isRequired && options[option.name] == nil {
                throw error(entry.value, key, "missing required key '\(option.name)' (\(option.summary))")
            }
            config.remotes.append(RemoteConfig(name: entry.key, type: type, options: options, encryption: encryption))
        }
    }

    private mutating func readFolders(_ node: Node) throws(ConfigError) {
        for entry in try mapping(node, key: "folders", allowed: nil) {
            let key = "folders.\(entry.key)"
            let fields = try mapping(entry.value, key: key, allowed: Self.keys("folders.NAME"))
            var localPath: String?
            var remoteName: String?
            var remotePath = RelativePath.root
            var mode = SyncMode.push
            var ignore: [String] = []
            var conflict = ConflictPolicies.FolderSetting()
            var trash = TrashSettings.standard
            var ignoresHiddenNames = false
            var localLimit: (limit: LocalLimit, node: Node)?
            var conditions = RunConditions()
            var remoteCheck: (interval: Duration, node: Node)?
            var rights: (value: RemoteRights, node: Node)?
            var retention = VersionRetention()
            var retentionKeys: [(key: String, node: Node)] = []
            for field in fields {
                let fieldKey = key + "." + field.key
                switch field.key {
                case "path": localPath = try path(field.value, key: fieldKey)
                case "remote":
                    let name = try string(field.value, key: fieldKey)
                    guard config.remote(named: name) != nil else {
                        let known = config.remotes.map(\.name)
                        throw error(field.value, fieldKey, "no remote named '\(name)'"
                            + (known.isEmpty ? " (define it under 'remotes:')" : " (remotes: \(known.joined(separator: ", ")))"))
                    }
                    remoteName = name
                case "remote_path":
                    let text = try string(field.value, key: fieldKey)
                    do {
                        remotePath = try RelativePath(text)
                    } catch {
                        throw self.error(field.value, fieldKey, error.message)
                    }
                case "mode": mode = try choice(field.value, key: fieldKey, unknown: "mode", expected: "push, pull or sync")
                case "ignore": ignore = try globList(field.value, key: fieldKey)
                case "conflict": conflict = try folderConflict(field.value, key: fieldKey)
                case "trash": trash = try trashSettings(field.value, key: fieldKey)
                case "hidden_names":
                    switch try string(field.value, key: fieldKey) {
                    case "check": ignoresHiddenNames = false
                    case "ignore": ignoresHiddenNames = true
                    case let other: throw error(field.value, fieldKey, "unknown value '\(other)' (expected check or ignore)")
                    }
                case "local_limit": localLimit = (try self.localLimit(field.value, key: fieldKey), field.keyNode)
                case "when": conditions = try runConditions(field.value, key: fieldKey)
                case "remote_check": remoteCheck = (try duration(field.value, key: fieldKey), field.keyNode)
                case "remote_rights": rights = (try remoteRights(field.value, key: fieldKey), field.value)
                case "keep_versions":
                    retention.keepVersions = try integer(field.value, key: fieldKey, range: 1...1_000_000)
                    retentionKeys.append((field.key, field.keyNode))
                case "keep_days":
                    retention.keepDays = try integer(field.value, key: fieldKey, range: 1...100_000)
                    retentionKeys.append((field.key, field.keyNode))
                default: break
                }
            }
            guard let localPath else { throw error(entry.value, key, "missing required key 'path' (the local folder)") }
            if let localLimit, mode == .push {
                throw error(localLimit.node, key + ".local_limit",
                            "a cache budget applies to pull and sync folders; a push folder keeps its files")
            }
            guard let remoteName else { throw error(entry.value, key, "missing required key 'remote' (a name under 'remotes:')") }
            try checkRights(rights, retention: retentionKeys, mode: mode, folderKey: key)
            config.folders.append(FolderConfig(
                name: entry.key, localPath: localPath, remote: remoteName, remotePath: remotePath, mode: mode, ignore: ignore,
                conflict: conflict, trash: trash, ignoresHiddenNames: ignoresHiddenNames, localLimit: localLimit?.limit,
                conditions: conditions, remoteCheck: remoteCheck?.interval, rights: rights?.value ?? .all, retention: retention))
        }
    }

    private mutating func readQueues(_ node: Node) throws(ConfigError) {
        guard case let .sequence(items) = node else {
            throw error(node, "queues", "expected a list of queues, highest priority first")
        }
        var queues: [QueueRule] = []
        for (index, item) in items.enumerated() {
            let key = "queues[\(index)]"
            let fields = try mapping(item, key: key, allowed: Self.keys("queues[]"))
            var rule = QueueRule(name: "", match: [], concurrency: 1)
            var hasName = false
            for field in fields {
                let fieldKey = key + "." + field.key
                switch field.key {
                case "name":
                    rule.name = try string(field.value, key: fieldKey)
                    guard !queues.contains(where: { $0.name == rule.name }) else {
                        throw error(field.value, fieldKey, "queue '\(rule.name)' is defined twice")
                    }
                    hasName = true
                case "match": rule.match = try globList(field.value, key: fieldKey)
                case "min_size": rule.minSize = try size(field.value, key: fieldKey)
                case "max_size": rule.maxSize = try size(field.value, key: fieldKey)
                case "concurrency": rule.concurrency = try integer(field.value, key: fieldKey, range: 1...64)
                case "conflict": rule.conflict = try conflictPolicy(field.value, key: fieldKey)
                default: break
                }
            }
            guard hasName else { throw error(item, key, "missing required key 'name'") }
            queues.append(rule)
        }
        guard !queues.isEmpty else { throw error(node, "queues", "at least one queue is needed") }
        config.queues = queues
    }

    private mutating func readTransfers(_ node: Node) throws(ConfigError) {
        for entry in try mapping(node, key: "transfers", allowed: Self.keys("transfers")) {
            let key = "transfers." + entry.key
            switch entry.key {
            case "max": config.transfers.maxConcurrent = try integer(entry.value, key: key, range: 1...256)
            case "bandwidth":
                let text = try string(entry.value, key: key)
                if text == "off" || text == "0" {
                    config.transfers.bandwidthLimit = nil
                } else {
                    config.transfers.bandwidthLimit = try size(entry.value, key: key)
                }
            case "max_delete":
                config.transfers.maxDeleteShare = try share(entry.value, key: key, percent: 0...100,
                                                            expected: "a percentage such as 50%")
            case "min_free_space":
                let text = try string(entry.value, key: key)
                if text.hasSuffix("%") {
                    guard let percent = Double(text.dropLast()), (0...50).contains(percent) else {
                        throw error(entry.value, key, "expected a size such as 2G or a percentage from 0% to 50%")
                    }
                    config.transfers.minFreeSpace = .share(percent / 100)
                } else {
                    config.transfers.minFreeSpace = .bytes(try size(entry.value, key: key))
                }
            case "compare_max_size": config.transfers.compareMaxSize = try size(entry.value, key: key)
            default: break
            }
        }
    }

    private mutating func readHolds(_ node: Node) throws(ConfigError) {
        for entry in try mapping(node, key: "holds", allowed: Self.keys("holds")) {
            let key = "holds." + entry.key
            switch entry.key {
            case "replace":
                config.holds.replaceShare = try string(entry.value, key: key) == "off" ? nil
                    : try share(entry.value, key: key, percent: 1...100,
                                expected: "a percentage from 1% to 100%, such as 30%, or off")
            case "min_files": config.holds.minFiles = try integer(entry.value, key: key, range: 1...10_000_000)
            case "content": config.holds.checksContent = try boolean(entry.value, key: key)
            default: break
            }
        }
    }

    private mutating func readRetry(_ node: Node) throws(ConfigError) {
        for entry in try mapping(node, key: "retry", allowed: Self.keys("retry")) {
            let key = "retry." + entry.key
            switch entry.key {
            case "attempts": config.retry.attempts = try integer(entry.value, key: key, range: 1...1000)
            case "passes": config.retry.passes = try integer(entry.value, key: key, range: 1...100)
            case "base_delay": config.retry.baseDelay = try duration(entry.value, key: key)
            case "max_delay": config.retry.maxDelay = try duration(entry.value, key: key)
            case "offline_wait":
                if (try? string(entry.value, key: key)) == "forever" {
                    config.retry.offlineWait = nil
                } else {
                    config.retry.offlineWait = try duration(entry.value, key: key)
                }
            case "factor":
                let text = try string(entry.value, key: key)
                guard let factor = Double(text), factor >= 1, factor <= 10 else {
                    throw error(entry.value, key, "expected a number from 1 to 10")
                }
                config.retry.factor = factor
            default: break
            }
        }
        if config.retry.maxDelay < config.retry.baseDelay {
            throw error(node, "retry.max_delay", "must not be shorter than base_delay")
        }
    }

    /// `limits:`: bounds on what a remote can make Ferry hold (ListingBounds).
    private mutating func readLimits(_ node: Node) throws(ConfigError) {
        for entry in try mapping(node, key: "limits", allowed: Self.keys("limits")) {
            let key = "limits." + entry.key
            switch entry.key {
            case "remote_depth": config.listingBounds.maxDepth = try integer(entry.value, key: key, range: 1...100_000)
            case "remote_entries": config.listingBounds.maxEntries = try integer(entry.value, key: key, range: 1...1_000_000_000)
            default: break
            }
        }
    }

    private mutating func readScan(_ node: Node) throws(ConfigError) {
        for entry in try mapping(node, key: "scan", allowed: Self.keys("scan")) {
            let key = "scan." + entry.key
            switch entry.key {
            case "follow_symlinks": config.scan.followSymlinks = try boolean(entry.value, key: key)
            case "ignore": config.scan.ignore = try globList(entry.value, key: key)
            default: break
            }
        }
    }

    private mutating func readArchive(_ node: Node) throws(ConfigError) {
        var rule = ArchiveRule()
        for entry in try mapping(node, key: "archive", allowed: Self.keys("archive")) {
            let key = "archive." + entry.key
            switch entry.key {
            case "match": rule.match = try globList(entry.value, key: key)
            case "older_than": rule.olderThan = try duration(entry.value, key: key)
            case "max_file_size": rule.maxFileSize = try size(entry.value, key: key)
            case "bundle_size":
                rule.bundleSize = try size(entry.value, key: key)
                guard rule.bundleSize >= 64 << 10 else { throw error(entry.value, key, "must be at least 64k") }
            case "format":
                let text = try string(entry.value, key: key)
                guard let format = ArchiveFormat(rawValue: text) else {
                    throw error(entry.value, key, "unknown format '\(text)' (expected one of: "
                        + ArchiveFormat.allCases.map(\.rawValue).joined(separator: ", ") + ")")
                }
                rule.format = format
            case "min_files": rule.minFiles = try integer(entry.value, key: key, range: 1...1_000_000)
            default: break
            }
        }
        config.archive = rule
    }

    /// `items:`: how files group into media items.
    private mutating func readItems(_ node: Node) throws(ConfigError) {
        for entry in try mapping(node, key: "items", allowed: Self.keys("items")) {
            let key = "items." + entry.key
            switch entry.key {
            case "stem":
                let text = try string(entry.value, key: key)
                guard let rule = ItemGrouping.StemRule(rawValue: text) else {
                    throw error(entry.value, key, "unknown stem rule '\(text)' (expected first-dot or last-dot)")
                }
                config.items.stem = rule
            case "thumbnail_folders": config.items.thumbnailFolders = try nameList(entry.value, key: key)
            case "stem_suffixes": config.items.stemSuffixes = try nameList(entry.value, key: key)
            default: break
            }
        }
    }

    /// A folder's `conflict:`: one policy, or a mapping of queue names (and `default`) to policies.
    private func folderConflict(_ node: Node, key: String) throws(ConfigError) -> ConflictPolicies.FolderSetting {
        if case .scalar = node { return .init(fallback: try conflictPolicy(node, key: key)) }
        var setting = ConflictPolicies.FolderSetting()
        for entry in try mapping(node, key: key, allowed: nil) {
            let entryKey = key + "." + entry.key
            let policy = try conflictPolicy(entry.value, key: entryKey)
            if entry.key == "default" {
                setting.fallback = policy
            } else {
                guard config.queues.contains(where: { $0.name == entry.key }) else {
                    throw error(entry.keyNode, entryKey, "no queue named '\(entry.key)' (queues: "
                        + config.queues.map(\.name).joined(separator: ", ") + "; or 'default')")
                }
                setting.perQueue[entry.key] = policy
            }
        }
        return setting
    }

    private func conflictPolicy(_ node: Node, key: String) throws(ConfigError) -> ConflictPolicy {
        let text = try string(node, key: key)
        guard let policy = ConflictPolicy(rawValue: text) else {
            throw error(node, key, "unknown conflict policy '\(text)' (expected one of: "
                + ConflictPolicy.allCases.map(\.rawValue).joined(separator: ", ") + ")")
        }
        return policy
    }

    /// A folder's `trash:`: `off`, or a mapping of `local`, `remote` and `keep`.
    private func trashSettings(_ node: Node, key: String) throws(ConfigError) -> TrashSettings {
        var settings = TrashSettings.standard
        if case .scalar = node {
            guard try !boolean(node, key: key) else { return settings }
            settings.enabled = false
            return settings
        }
        for entry in try mapping(node, key: key, allowed: Self.keys("folders.NAME.trash")) {
            let entryKey = key + "." + entry.key
            switch entry.key {
            case "local":
                let text = try string(entry.value, key: entryKey)
                guard !text.isEmpty else { throw error(entry.value, entryKey, "expected a path, found nothing") }
                settings.localPath = LocalFileSystem.expandingHome(text, environment: ProcessInfo.processInfo.environment)
            case "remote":
                let text = try string(entry.value, key: entryKey)
                let path: RelativePath
                do {
                    path = try RelativePath(text)
                } catch {
                    throw self.error(entry.value, entryKey, error.message)
                }
                guard !path.isRoot else { throw error(entry.value, entryKey, "the remote trash cannot be the remote's root") }
                settings.remotePath = path
            case "keep":
                if (try? string(entry.value, key: entryKey)) == "forever" {
                    settings.keepSeconds = nil
                } else {
                    settings.keepSeconds = try duration(entry.value, key: entryKey).inSeconds
                }
            default: break
            }
        }
        return settings
    }

    // MARK: Typed values

    private func nameList(_ node: Node, key: String) throws(ConfigError) -> [String] {
        switch node {
        case let .sequence(items):
            var names: [String] = []
            for item in items { names.append(try string(item, key: key)) }
            return names
        case .scalar: return [try string(node, key: key)]
        default: throw error(node, key, "expected a list of names, found \(describe(node))")
        }
    }

    struct Entry {
        var key: String
        var keyNode: Node
        var value: Node
    }

    /// A mapping's entries in file order; with `allowed`, any other key is an error.
    func mapping(_ node: Node, key: String?, allowed: [String]?) throws(ConfigError) -> [Entry] {
        guard case let .mapping(mapping) = node else {
            if case let .scalar(scalar) = node, scalar.string.isEmpty || scalar.tag == .implicit && scalar.string == "~" {
                return []
            }
            throw error(node, key, "expected a mapping of keys to values, found \(describe(node))")
        }
        var entries: [Entry] = []
        var seen: Set<String> = []
        for (keyNode, value) in mapping {
            guard case let .scalar(scalar) = keyNode else {
                throw error(keyNode, key, "keys must be plain text")
            }
            let name = scalar.string
            let path = key.map { "\($0).\(name)" } ?? name
            if let allowed, !allowed.contains(name) {
                if let near = Self.nearest(name, among: allowed) {
                    throw error(keyNode, path, "unknown key; did you mean '\(near)'?")
                }
                throw error(keyNode, path, "unknown key (expected one of: \(allowed.joined(separator: ", ")))")
            }
            guard seen.insert(name).inserted else {
                throw error(keyNode, path, "key appears twice")
            }
            entries.append(Entry(key: name, keyNode: keyNode, value: value))
        }
        return entries
    }

    /// A percentage written `N%`, within `percent`, as a share from 0 to 1.
    func share(_ node: Node, key: String, percent range: ClosedRange<Double>, expected: String) throws(ConfigError) -> Double {
        let text = try string(node, key: key)
        guard text.hasSuffix("%"), let percent = Double(text.dropLast()), range.contains(percent) else {
            throw error(node, key, "expected \(expected)")
        }
        return percent / 100
    }

    func string(_ node: Node, key: String) throws(ConfigError) -> String {
        guard case let .scalar(scalar) = node else {
            throw error(node, key, "expected text, found \(describe(node))")
        }
        return scalar.string
    }

    func integer(_ node: Node, key: String, range: ClosedRange<Int>) throws(ConfigError) -> Int {
        let text = try string(node, key: key)
        guard let value = Int(text) else {
            throw error(node, key, "expected a whole number, found '\(text)'")
        }
        guard range.contains(value) else {
            throw error(node, key, "\(value) is out of range (\(range.lowerBound) to \(range.upperBound))")
        }
        return value
    }

    func boolean(_ node: Node, key: String) throws(ConfigError) -> Bool {
        let text = try string(node, key: key)
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error(node, key, "expected true or false, found '\(text)'")
        }
    }

    func size(_ node: Node, key: String) throws(ConfigError) -> Int64 {
        let text = try string(node, key: key)
        guard let bytes = Quantity.bytes(text) else {
            throw error(node, key, "expected a size such as 512k, 4MiB or 1G, found '\(text)'")
        }
        return bytes
    }

    /// A scalar naming one of `Choice`'s cases; anything else is "unknown WHAT 'text'
    /// (expected EXPECTED)" at the value.
    func choice<Choice: RawRepresentable>(_ node: Node, key: String, unknown what: String,
                                          expected: String) throws(ConfigError) -> Choice where Choice.RawValue == String {
        let text = try string(node, key: key)
        guard let value = Choice(rawValue: text) else {
            throw error(node, key, "unknown \(what) '\(text)' (expected \(expected))")
        }
        return value
    }

    /// "a, b or c".
    static func alternatives(_ words: [String]) -> String {
        words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " or " + words[words.count - 1]
    }

    func duration(_ node: Node, key: String) throws(ConfigError) -> Duration {
        let text = try string(node, key: key)
        guard let value = Quantity.duration(text) else {
            throw error(node, key, "expected a duration such as 500ms, 30s, 5m or 4h, found '\(text)'")
        }
        return value
    }

    func path(_ node: Node, key: String) throws(ConfigError) -> String {
        let text = try string(node, key: key)
        guard !text.isEmpty else { throw error(node, key, "expected a path, found nothing") }
        return LocalFileSystem.absolute(
            LocalFileSystem.expandingHome(text, environment: ProcessInfo.processInfo.environment), relativeTo: baseDirectory)
    }

    func globList(_ node: Node, key: String) throws(ConfigError) -> [String] {
        let items: [Node]
        switch node {
        case let .sequence(sequence): items = Array(sequence)
        case .scalar: items = [node]
        default: throw error(node, key, "expected a list of glob patterns, found \(describe(node))")
        }
        var globs: [String] = []
        for item in items {
            let text = try string(item, key: key)
            do {
                _ = try GlobPattern(text)
            } catch {
                throw self.error(item, key, error.description)
            }
            globs.append(text)
        }
        return globs
    }

    private func optionValue(_ node: Node, option: BackendPlugin.Option, key: String) throws(ConfigError) -> String {
        switch option.kind {
        case .string where !option.values.isEmpty:
            let text = try string(node, key: key)
            // In any case (`JSON` for `json`), handed on as the plugin spells it.
            guard let value = option.values.first(where: { $0.caseInsensitiveCompare(text) == .orderedSame }) else {
                throw error(node, key, "unknown value '\(text)' (expected \(Self.alternatives(option.values)))")
            }
            return value
        case .string, .url: return try string(node, key: key)
        case .path: return try path(node, key: key)
        case .integer: return String(try integer(node, key: key, range: Int.min...Int.max))
        case .boolean: return String(try boolean(node, key: key))
        }
    }

    func describe(_ node: Node) -> String {
        switch node {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case let .scalar(scalar): return "'\(scalar.string)'"
        case .alias: return "an alias"
        }
    }

    func error(_ node: Node, _ key: String?, _ message: String) -> ConfigError {
        ConfigError(file: file, line: node.mark?.line, column: node.mark?.column, key: key, message: message)
    }
}
