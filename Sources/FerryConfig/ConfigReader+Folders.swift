import FerryPlanning
import Yams

/// A folder's cache budget (`local_limit:`) and run conditions (`when:`).
extension ConfigReader {
    /// `local_limit: { max_size: 20G, max_files: 5000, evict: oldest, keep_queues: [thumbnails] }`.
    func localLimit(_ node: Node, key: String) throws(ConfigError) -> LocalLimit {
        var limit = LocalLimit()
        for entry in try mapping(node, key: key, allowed: Self.keys("folders.NAME.local_limit")) {
            let entryKey = key + "." + entry.key
            switch entry.key {
            case "max_size":
                let bytes = try size(entry.value, key: entryKey)
                guard bytes > 0 else { throw error(entry.value, entryKey, "expected a size above zero, such as 20G") }
                limit.maxBytes = bytes
            case "max_files": limit.maxFiles = try integer(entry.value, key: entryKey, range: 1...1_000_000_000)
            case "evict":
                limit.order = try choice(entry.value, key: entryKey, unknown: "eviction order",
                                         expected: "oldest or least-recently-used")
            case "keep_queues":
                var names: Set<String> = []
                let items: [Node]
                switch entry.value {
                case let .sequence(sequence): items = Array(sequence)
                case .scalar: items = [entry.value]
                default: throw error(entry.value, entryKey, "expected a list of queue names, found \(describe(entry.value))")
                }
                for item in items {
                    let name = try string(item, key: entryKey)
                    guard config.queues.contains(where: { $0.name == name }) else {
                        throw error(item, entryKey, "no queue named '\(name)' (queues: \(config.queues.map(\.name).joined(separator: ", ")))")
                    }
                    names.insert(name)
                }
                limit.keepQueues = names
            default: break
            }
        }
        guard limit.maxBytes != nil || limit.maxFiles != nil else {
            throw error(node, key, "expected max_size or max_files (or both)")
        }
        return limit
    }

    /// `when: { network: unmetered, network_command: CMD, power: ac, min_battery: 30% }`.
    func runConditions(_ node: Node, key: String) throws(ConfigError) -> RunConditions {
        var conditions = RunConditions()
        for entry in try mapping(node, key: key, allowed: Self.keys("folders.NAME.when")) {
            let entryKey = key + "." + entry.key
            switch entry.key {
            case "network":
                conditions.network = try choice(entry.value, key: entryKey, unknown: "network condition", expected: "unmetered or any")
            case "network_command":
                let text = try string(entry.value, key: entryKey)
                guard !text.isEmpty else { throw error(entry.value, entryKey, "expected a command, found nothing") }
                conditions.networkCommand = text
            case "power":
                conditions.power = try choice(entry.value, key: entryKey, unknown: "power condition", expected: "ac or any")
            case "min_battery":
                let text = try string(entry.value, key: entryKey)
                let digits = text.hasSuffix("%") ? String(text.dropLast()) : text
                guard let percent = Int(digits), (0...100).contains(percent) else {
                    throw error(entry.value, entryKey, "expected a percentage from 0% to 100%, such as 30%")
                }
                conditions.minBattery = percent
            default: break
            }
        }
        return conditions
    }
}

/// A folder's rights on its remote (`remote_rights:`) and how long it keeps versions.
extension ConfigReader {
    /// `remote_rights: [read, write, delete]`: a list (or one name) of rights; an unknown
    /// name is an error at its own line and column, with the near right when there is one.
    func remoteRights(_ node: Node, key: String) throws(ConfigError) -> RemoteRights {
        let items: [Node]
        switch node {
        case let .sequence(sequence): items = Array(sequence)
        case .scalar: items = [node]
        default: throw error(node, key, "expected a list of rights (read, write, delete), found \(describe(node))")
        }
        var rights: Set<RemoteRights.Right> = []
        let names = RemoteRights.Right.allCases.map(\.rawValue)
        for item in items {
            let text = try string(item, key: key)
            guard let right = RemoteRights.Right(rawValue: text.lowercased()) else {
                // Two edits away at most (a swap of two letters, `wirte`): the names are short.
                let near = names.map { ($0, Self.editDistance(text.lowercased(), $0)) }.filter { $0.1 <= 2 }.min { $0.1 < $1.1 }
                let hint = near.map { "; did you mean '\($0.0)'?" } ?? ""
                throw error(item, key, "unknown right '\(text)' (expected read, write or delete)\(hint)")
            }
            guard rights.insert(right).inserted else { throw error(item, key, "'\(text)' is listed twice") }
        }
        guard rights.contains(.read) else {
            throw error(node, key, "the rights must include read (Ferry lists the remote to know what it holds)")
        }
        return RemoteRights(rights: rights)
    }

    /// Checks a folder's rights against its mode and retention: a push or sync folder needs
    /// `write`, and retention (which deletes old versions) needs `delete`.
    func checkRights(_ rights: (value: RemoteRights, node: Node)?, retention: [(key: String, node: Node)],
                     mode: SyncMode, folderKey: String) throws(ConfigError) {
        let value = rights?.value ?? .all
        if let rights, !value.mayWrite, mode != .pull {
            throw error(rights.node, folderKey + ".remote_rights",
                        "a \(mode.rawValue) folder writes to its remote: add write, or set mode: pull")
        }
        if !value.mayDelete, let first = retention.first {
            throw error(first.node, folderKey + "." + first.key,
                        "\(first.key) removes old versions, which needs delete in remote_rights; "
                            + "without delete every version is kept")
        }
    }
}
