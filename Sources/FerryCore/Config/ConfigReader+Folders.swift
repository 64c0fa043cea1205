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
