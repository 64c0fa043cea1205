import FerryPlanning
import FerryPluginAPI
import Yams

/// The sections `ferry watch` and `ferry daemon` read: `watch:`, `schedule:` and
/// `bandwidth:`. They refer to folders, remotes and queues, so they are read last.
extension ConfigReader {
    static let daemonSections = ["watch", "schedule", "bandwidth"]

    mutating func readDaemonSections(_ entries: [Entry]) throws(ConfigError) {
        for entry in entries {
            switch entry.key {
            case "watch": try readWatch(entry.value)
            case "schedule": try readSchedule(entry.value)
            case "bandwidth": try readBandwidth(entry.value)
            default: break
            }
        }
    }

    private mutating func readWatch(_ node: Node) throws(ConfigError) {
        for entry in try mapping(node, key: "watch", allowed: Self.keys("watch")) {
            let key = "watch." + entry.key
            let value = try duration(entry.value, key: key)
            guard value > .zero else { throw error(entry.value, key, "must be longer than 0") }
            switch entry.key {
            case "quiet_period": config.watch.quietPeriod = value
            case "rescan_interval": config.watch.rescanInterval = value
            case "poll_interval": config.watch.pollInterval = value
            case "stop_timeout": config.watch.stopTimeout = value
            case "condition_interval": config.watch.conditionInterval = value
            default: break
            }
        }
    }

    private mutating func readSchedule(_ node: Node) throws(ConfigError) {
        guard case let .sequence(items) = node else {
            if case let .scalar(scalar) = node, scalar.string.isEmpty || scalar.string == "~" { return }
            throw error(node, "schedule", "expected a list of entries such as '- every: 4h' with 'run: push FOLDER'")
        }
        for (index, item) in items.enumerated() {
            let key = "schedule[\(index)]"
            var trigger: ScheduleEntry.Trigger?
            var action: (SyncMode, String?)?
            var queues: [String]?
            for field in try mapping(item, key: key, allowed: Self.keys("schedule[]")) {
                let fieldKey = key + "." + field.key
                switch field.key {
                case "every":
                    guard trigger == nil else { throw error(field.keyNode, fieldKey, "give either 'every' or 'cron', not both") }
                    let interval = try duration(field.value, key: fieldKey)
                    guard interval >= .seconds(60) else {
                        throw error(field.value, fieldKey, "the shortest interval is 1m; use the watcher for changes as they happen")
                    }
                    trigger = .every(interval)
                case "cron":
                    guard trigger == nil else { throw error(field.keyNode, fieldKey, "give either 'every' or 'cron', not both") }
                    do {
                        trigger = .cron(try CronExpression(try string(field.value, key: fieldKey)))
                    } catch let failure as ScheduleError {
                        throw error(field.value, fieldKey, failure.message)
                    } catch let failure as ConfigError {
                        throw failure
                    } catch {
                        throw self.error(field.value, fieldKey, "\(error)")
                    }
                case "run": action = try scheduledAction(field.value, key: fieldKey)
                case "queues":
                    var names: [String] = []
                    let nodes: [Node]
                    switch field.value {
                    case let .sequence(sequence): nodes = Array(sequence)
                    default: nodes = [field.value]
                    }
                    for queueNode in nodes {
                        let name = try string(queueNode, key: fieldKey)
                        guard config.queues.contains(where: { $0.name == name }) else {
                            throw error(queueNode, fieldKey, "no queue named '\(name)' (queues: \(config.queues.map(\.name).joined(separator: ", ")))")
                        }
                        names.append(name)
                    }
                    queues = names
                default: break
                }
            }
            guard let trigger else { throw error(item, key, "missing 'every' (such as 4h) or 'cron' (such as \"0 2 * * *\")") }
            guard let action else { throw error(item, key, "missing required key 'run' (push FOLDER, pull FOLDER or sync FOLDER)") }
            config.schedules.append(ScheduleEntry(trigger: trigger, mode: action.0, folder: action.1, queues: queues))
        }
    }

    /// `push`, `pull`, `sync`, each alone (every folder of that mode) or with a FOLDER.
    private func scheduledAction(_ node: Node, key: String) throws(ConfigError) -> (SyncMode, String?) {
        let words = try string(node, key: key).split(whereSeparator: \.isWhitespace).map(String.init)
        guard (1...2).contains(words.count), let mode = SyncMode(rawValue: words[0]) else {
            throw error(node, key, "expected 'push FOLDER', 'pull FOLDER' or 'sync FOLDER' (or just push/pull/sync for every folder of that mode)")
        }
        guard words.count == 2 else { return (mode, nil) }
        guard config.folder(named: words[1]) != nil else {
            let known = config.folders.map(\.name)
            throw error(node, key, "no folder named '\(words[1])'" + (known.isEmpty ? " (define it under 'folders:')" : " (folders: \(known.joined(separator: ", ")))"))
        }
        return (mode, words[1])
    }

    private mutating func readBandwidth(_ node: Node) throws(ConfigError) {
        for entry in try mapping(node, key: "bandwidth", allowed: Self.keys("bandwidth")) {
            let key = "bandwidth." + entry.key
            switch entry.key {
            case "all": config.bandwidth.all = try timetable(entry.value, key: key)
            case "remotes":
                for remote in try mapping(entry.value, key: key, allowed: nil) {
                    guard config.remote(named: remote.key) != nil else {
                        throw error(remote.keyNode, key + "." + remote.key, "no remote named '\(remote.key)' (remotes: \(config.remotes.map(\.name).joined(separator: ", ")))")
                    }
                    config.bandwidth.remotes[remote.key] = try timetable(remote.value, key: key + "." + remote.key)
                }
            case "queues":
                for queue in try mapping(entry.value, key: key, allowed: nil) {
                    guard config.queues.contains(where: { $0.name == queue.key }) else {
                        throw error(queue.keyNode, key + "." + queue.key, "no queue named '\(queue.key)' (queues: \(config.queues.map(\.name).joined(separator: ", ")))")
                    }
                    config.bandwidth.queues[queue.key] = try timetable(queue.value, key: key + "." + queue.key)
                }
            default: break
            }
        }
    }

    private func timetable(_ node: Node, key: String) throws(ConfigError) -> BandwidthTimetable {
        let text = try string(node, key: key)
        do {
            return try BandwidthTimetable(text)
        } catch {
            throw self.error(node, key, error.message)
        }
    }
}
