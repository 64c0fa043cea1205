import ArgumentParser
import FerryCore
import FerryPluginAPI
import Foundation

extension Ferry {
    struct Doctor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the journal (integrity, transfers left half-done) and the health the run history shows.",
            discussion: """
                Exit 0 when the journal is sound (interrupted transfers continue on the next run), 1 when it is damaged.                 The health report (folders whose failures grow, queues that have not moved for a day, remotes                 offline more than history.offline_alert of the last day, a journal growing faster than its files)                 warns without changing the exit code.
                """)

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = try CommandContext.load(global)
            let journalPath = StateLocation.journalPath(in: context.stateDirectory)
            let report: JournalHealth
            do {
                guard let journal = try Journal.openForReading(at: journalPath) else {
                    var object = JSONObject()
                    object.add("journal", journalPath)
                    object.add("integrity", "absent")
                    StandardStreams.output(global.json ? object.text : "nothing to check: no journal at \(journalPath)")
                    return
                }
                report = try await JournalHealth.examine(journal, stateDirectory: context.stateDirectory,
                                                         offlineAlert: context.config.history.offlineAlert)
            } catch {
                throw CommandFailure.runtime("\(error); move the journal aside and run again to rebuild it from both sides")
            }
            StandardStreams.output(global.json ? report.json.text : report.text)
            if !report.problems.isEmpty { throw ExitCodeFailure.someFilesFailed }
        }
    }
}

/// What `ferry doctor` found.
struct JournalHealth {
    struct Interrupted {
        var pair: FolderPairRecord
        /// Files left `uploading`/`downloading`.
        var files: [FileRecord]
        /// The process syncing the pair now, if any: then the transfers are live, not stuck.
        var holder: String?
    }

    var path: String
    var problems: [String]
    var interrupted: [Interrupted]
    /// What the run history shows (nil: no history yet).
    var findings: [HealthCheck.Finding]?

    static func examine(_ journal: Journal, stateDirectory: String, offlineAlert: Double = 0.1) async throws -> JournalHealth {
        let problems = try await journal.integrityProblems()
        var interrupted: [Interrupted] = []
        var waiting: [HealthCheck.WaitingQueue] = []
        for pair in try await journal.folderPairs() {
            guard let id = pair.id else { continue }
            for queue in try await journal.waitingQueues(pairId: id) {
                waiting.append(HealthCheck.WaitingQueue(folder: pair.name, queue: queue.queue, files: queue.files,
                                                        oldestSince: queue.oldestSince))
            }
            let files = try await journal.records(pairId: id, statuses: [.uploading, .downloading])
            guard !files.isEmpty else { continue }
            interrupted.append(Interrupted(pair: pair, files: files,
                                           holder: RunLock.holder(stateDirectory: stateDirectory, pairId: id)))
        }
        var findings: [HealthCheck.Finding]?
        if let history = try? RunHistory.openExisting(stateDirectory: stateDirectory) {
            let now = Date().timeIntervalSince1970
            let runs = (try? await history.runs(since: now - 7 * HealthCheck.day, limit: 100_000)) ?? []
            let outages = (try? await history.outages(since: now - HealthCheck.day)) ?? []
            findings = HealthCheck.examine(runs: runs, outages: outages, waiting: waiting, now: now, offlineAlert: offlineAlert)
        }
        return JournalHealth(path: journal.path, problems: problems, interrupted: interrupted, findings: findings)
    }

    var text: String {
        var lines = ["journal \(path)"]
        if problems.isEmpty {
            lines.append("  integrity: ok")
        } else {
            lines.append("  integrity: \(problems.count) problem(s); move the journal aside and run again to rebuild it from both sides")
            lines += problems.map { "    \($0)" }
        }
        if interrupted.isEmpty { lines.append("  no transfer left half-done") }
        for entry in interrupted {
            if let holder = entry.holder {
                lines.append("  \(entry.pair.name): \(entry.files.count) transfer(s) under way now (\(holder))")
            } else {
                lines.append("  \(entry.pair.name): \(entry.files.count) transfer(s) interrupted (no process holds the pair); the next run continues them")
            }
            lines += entry.files.prefix(20).map { "    \($0.status.rawValue) \($0.path)" }
            if entry.files.count > 20 { lines.append("    … and \(entry.files.count - 20) more") }
        }
        if let findings {
            lines.append(findings.isEmpty ? "health (run history): nothing to report" : "health (run history):")
            lines += findings.map { "  warning: \($0.message)" }
        } else {
            lines.append("health: no run history yet")
        }
        return lines.joined(separator: "\n")
    }

    var json: JSONObject {
        var object = JSONObject()
        object.add("journal", path)
        object.add("integrity", problems.isEmpty ? "ok" : "damaged")
        object.add("problems", problems)
        object.add("interrupted", interrupted.map { entry in
            var item = JSONObject()
            item.add("folder", entry.pair.name)
            item.add("running", entry.holder)
            item.add("files", entry.files.map { record in
                var file = JSONObject()
                file.add("path", record.path)
                file.add("status", record.status.rawValue)
                return file
            })
            return item
        })
        object.add("health", (findings ?? []).map { finding in
            var item = JSONObject()
            item.add("kind", finding.kind.rawValue)
            item.add("subject", finding.subject)
            item.add("message", finding.message)
            return item
        })
        return object
    }
}
