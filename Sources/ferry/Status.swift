import ArgumentParser
import FerryConfig
import FerryCore
import FerryDaemon
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import FerrySystem
import Foundation

extension Ferry {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show counts and bytes per status and per queue from the journal.")

        @Argument(help: "Only this folder: a configured name, or a local path.")
        var folder: String?

        @Flag(name: .long, help: "Also list the files that failed, with their last error.")
        var errors = false

        @Flag(name: .long, help: "Also list the files in conflict (settle them with ferry resolve).")
        var conflicts = false

        @Flag(name: .long, help: "Also show media items (files sharing a stem) by status.")
        var items = false

        @Flag(name: .long, help: "List recent runs from the run history instead (what moved, failures, offline time).")
        var history = false

        @Option(name: .long, help: ArgumentHelp("With --history: how many runs (default 20).", valueName: "n"))
        var limit = 20

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = try CommandContext.load(global)
            if history {
                try await RunHistoryReport.show(state: context.state, folder: folder, limit: limit,
                                                json: global.json)
                return
            }
            let journalPath = context.state.journalPath
            let query = StatusQuery(folder: folder, listsErrors: errors, listsConflicts: conflicts, groupsItems: items)
            let (hasJournal, reports) = try await query.reports(context)
            // A daemon's API when one serves this state folder, else the status file of a `ferry watch`.
            let served = await DaemonStatusReport.fromAPI(stateDirectory: context.stateDirectory)
            let live = served ?? DaemonSnapshot.current(stateDirectory: context.stateDirectory).map { DaemonStatusReport(snapshot: $0) }
            if global.json {
                var object = JSONObject()
                object.add("journal", journalPath)
                object.add("folders", reports.map(\.json))
                object.add("daemon", json: live?.jsonText ?? "null")
                StandardStreams.output(object.text)
                return
            }
            defer { if let live { StandardStreams.output(live.text) } }
            if reports.isEmpty {
                StandardStreams.output(!hasJournal
                    ? "nothing synced yet (no journal at \(journalPath))"
                    : "no matching folder in the journal at \(journalPath)")
            } else {
                for report in reports { StandardStreams.output(report.text) }
            }
        }
    }
}

extension Ferry.Status {
    /// `photos: ./phone → nas:phone (push)` for a configured folder; `./src – file:///backup
    /// (ad-hoc)` for a pair run with --to/--from, whose mode the journal does not keep.
    static func heading(_ pair: FolderPairRecord, config: Config, currentDirectory: String) -> String {
        let local = PairLabel.local(pair.localRoot, currentDirectory: currentDirectory)
        if let folder = config.folders.first(where: { $0.name == pair.name && $0.localPath == pair.localRoot }) {
            let remote = folder.remotePath.isRoot ? folder.remote : folder.remote + ":" + folder.remotePath.string
            return "\(folder.name): \(local) \(PairLabel.arrow(folder.mode)) \(remote) (\(folder.mode.rawValue))"
        }
        let remote = PairLabel.typable(remoteLocation: pair.remoteLocation)
        return "\(local) – \(remote) (\(pair.name == "ad-hoc" ? "ad-hoc" : "\(pair.name), no longer configured"); ferry forget \(local) drops it)"
    }
}

/// One folder pair's counts, as text or JSON.
struct FolderReport {
    var pair: FolderPairRecord
    var counts: [StatusCount]
    var problems: [FileRecord]
    /// Queue names in priority order; queues the config no longer has come last.
    var queueOrder: [String]
    /// Media items, with `--items`.
    var items: ItemReport?
    /// Local and remote-only files of a folder with a cache budget (or with evicted files).
    var cache: Cache?
    /// What the folder's runs wait for (`when:`), nil when they may run.
    var waitingFor: String?
    /// The newest change another device announced on the shared remote (`ChangeMarker`).
    var lastRemoteChange: (device: String, at: Double)?

    struct Cache {
        var totals: Journal.CacheTotals
        var limit: LocalLimit?

        var line: String {
            var text = "  cache: \(Plural.count(totals.localFiles, "file")) local (\(ByteFormat.string(totals.localBytes))), "
                + "\(totals.remoteOnlyFiles) remote only (\(ByteFormat.string(totals.remoteOnlyBytes)))"
            if let limit {
                let bounds = [limit.maxBytes.map { ByteFormat.string($0) }, limit.maxFiles.map { Plural.count($0, "file") }]
                text += "; limit " + bounds.compactMap { $0 }.joined(separator: ", ")
            }
            return text
        }

        var json: JSONObject {
            var object = JSONObject()
            object.add("local_files", totals.localFiles)
            object.add("local_bytes", totals.localBytes)
            object.add("remote_only_files", totals.remoteOnlyFiles)
            object.add("remote_only_bytes", totals.remoteOnlyBytes)
            if let maxBytes = limit?.maxBytes { object.add("max_size", maxBytes) } else { object.add("max_size", json: "null") }
            if let maxFiles = limit?.maxFiles { object.add("max_files", maxFiles) } else { object.add("max_files", json: "null") }
            return object
        }
    }

    private func totals(by key: (StatusCount) -> String) -> [(String, Int, Int64)] {
        var files: [String: Int] = [:]
        var bytes: [String: Int64] = [:]
        var order: [String] = []
        for count in counts {
            let name = key(count)
            if files[name] == nil { order.append(name) }
            files[name, default: 0] += count.files
            bytes[name, default: 0] += count.bytes
        }
        let rank = { (name: String) in queueOrder.firstIndex(of: name) ?? queueOrder.count }
        return order.sorted { rank($0) < rank($1) }.map { ($0, files[$0] ?? 0, bytes[$0] ?? 0) }
    }

    private var statusTotals: [(String, Int, Int64)] {
        let totals = totals(by: { $0.status.rawValue })
        return FileStatus.allCases.compactMap { status in totals.first { $0.0 == status.rawValue } }
    }

    /// How the pair is shown: a configured folder as configured (`photos: ~/Pictures →
    /// nas:phone (push)`), an ad-hoc one by its two ends.
    var heading: String

    var text: String {
        var lines = [heading]
        if let lastRun = pair.lastRunAt {
            lines.append("  last run \(StatusWords.time(Date(timeIntervalSince1970: lastRun)))")
        } else {
            lines.append("  never run")
        }
        if let waitingFor { lines.append("  \(waitingFor)") }
        if let change = lastRemoteChange {
            lines.append("  last change from \(TerminalSafeText.escaping(change.device)), \(StatusWords.time(Date(timeIntervalSince1970: change.at)))")
        }
        if counts.isEmpty { lines.append("  no files tracked") }
        if let cache { lines.append(cache.line) }
        let statuses = statusTotals
        let wordWidth = statuses.map { StatusWords.file(FileStatus(rawValue: $0.0) ?? .inSync).count }.max() ?? 0
        for (status, files, bytes) in statuses {
            let word = StatusWords.file(FileStatus(rawValue: status) ?? .inSync)
            lines.append("  " + word.padding(toLength: wordWidth, withPad: " ", startingAt: 0)
                + "  " + Plural.count(files, "file").leftPadded(12) + "  " + ByteFormat.string(bytes).leftPadded(10))
        }
        if !counts.isEmpty { lines.append("  by queue:") }
        let queueWidth = totals(by: \.queue).map(\.0.count).max() ?? 0
        for (queue, files, bytes) in totals(by: \.queue) {
            let split = FileStatus.allCases.compactMap { status -> String? in
                let files = counts.filter { $0.queue == queue && $0.status == status }.reduce(0) { $0 + $1.files }
                return files > 0 ? "\(files) \(StatusWords.file(status))" : nil
            }
            lines.append("    " + queue.padding(toLength: queueWidth, withPad: " ", startingAt: 0)
                + "  " + Plural.count(files, "file").leftPadded(12) + "  " + ByteFormat.string(bytes).leftPadded(10)
                + "  (" + split.joined(separator: ", ") + ")")
        }
        if listsProblems {
            lines.append(problems.isEmpty ? "  problems: none" : "  problems:")
        }
        for problem in problems {
            lines.append("    \(StatusWords.file(problem.status)): \(problem.path): \(problem.lastError ?? "")")
        }
        if let items { lines += items.lines }
        return lines.joined(separator: "\n")
    }

    /// `--errors` or `--conflicts` was given: an empty list says "none".
    var listsProblems = false

    var json: JSONObject {
        var object = JSONObject()
        object.add("name", pair.name)
        object.add("local", pair.localRoot)
        object.add("remote", pair.remoteLocation)
        object.add("last_run", pair.lastRunAt.map { Date(timeIntervalSince1970: $0).ISO8601Format() })
        if let change = lastRemoteChange {
            var entry = JSONObject()
            entry.add("device", change.device)
            entry.add("at", Date(timeIntervalSince1970: change.at).ISO8601Format())
            object.add("last_remote_change", entry)
        }
        var statuses = JSONObject()
        for (status, files, bytes) in statusTotals {
            var entry = JSONObject()
            entry.add("files", files)
            entry.add("bytes", bytes)
            statuses.add(status, entry)
        }
        object.add("statuses", statuses)
        var queues = JSONObject()
        for (queue, _, _) in totals(by: \.queue) {
            var perStatus = JSONObject()
            for count in counts where count.queue == queue {
                var entry = JSONObject()
                entry.add("files", count.files)
                entry.add("bytes", count.bytes)
                perStatus.add(count.status.rawValue, entry)
            }
            queues.add(queue, perStatus)
        }
        object.add("queues", queues)
        object.add("problems", problems.map { record in
            var item = JSONObject()
            item.add("path", record.path)
            item.add("status", record.status.rawValue)
            item.add("error", record.lastError)
            return item
        })
        if let items { object.add("items", items.json) }
        if let cache { object.add("cache", cache.json) }
        object.add("waiting_for", waitingFor)
        return object
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
