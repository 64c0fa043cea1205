import ArgumentParser
import FerryConfig
import FerryCore
import FerryEngine
import FerryJournal
import FerryPlanning
import FerryPluginAPI
import Foundation

extension Ferry {
    struct Doctor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "doctor",
            abstract: "Check the journal (integrity, transfers left half-done) and the health the run history shows (holds, overdue folders, failing runs).",
            discussion: """
                Exit 0 when the journal is sound (interrupted transfers continue on the next run), 1 when it is damaged.                 The health report (folders whose failures grow, queues that have not moved for a day, remotes                 offline more than history.offline_alert of the last day, a journal growing faster than its files)                 warns without changing the exit code.
                """)

        @Flag(name: .long, help: ArgumentHelp(
            "Also abort the uploads left unfinished on each configured folder's remote (S3 multipart uploads), "
                + "except those the journal means to continue."))
        var cleanup = false

        @Option(name: .long, help: ArgumentHelp(
            "With --cleanup: only uploads started longer ago than this; a younger one may be another machine's, under way.",
            valueName: "duration"))
        var olderThan = "1h"

        @Flag(name: .long, help: ArgumentHelp(
            "Make the fixes doctor can make: files that failed for good in a folder whose runs or failures are flagged "
                + "are made pending again for the next run. A hold is never accepted here: a person decides (--accept-changes)."))
        var repair = false

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let context = try CommandContext.load(global)
            guard let age = Quantity.duration(olderThan), age >= .zero else {
                throw CommandFailure.usage("--older-than: '\(olderThan)' is not a duration (e.g. 1h, 7d, 0)")
            }
            let journalPath = context.state.journalPath
            let journal: Journal?
            var report: JournalHealth?
            do {
                journal = try await context.state.existingJournal()
                if let journal {
                    report = try await JournalHealth.examine(journal, state: context.state,
                                                             now: context.clock.wallTime(),
                                                             offlineAlert: context.config.history.offlineAlert,
                                                             expectations: ScheduleExpectations.of(context.config,
                                                                                                   now: context.clock.wallDate()))
                }
            } catch {
                throw CommandFailure.runtime("\(error); move the journal aside and run again to rebuild it from both sides")
            }
            if let report {
                StandardStreams.output(global.json ? report.json.text : report.text)
            } else {
                var object = JSONObject()
                object.add("journal", journalPath)
                object.add("integrity", "absent")
                StandardStreams.output(global.json ? object.text : "nothing to check: no journal at \(journalPath)")
            }
            if repair, let report, let journal {
                try await repairFailures(report, service: FolderService(recorded: RecordedFolders(journal: journal), clock: context.clock))
            }
            if cleanup {
                try await AbandonedUploadCleanup(context: context, journal: journal, olderThanSeconds: age.components.seconds,
                                                 json: global.json).run()
            }
            if let report, !report.problems.isEmpty { throw ExitCodeFailure.someFilesFailed }
        }

        /// Files that failed for good, in the folders whose runs or failures doctor flagged,
        /// become pending again (as `ferry retry`), so the next run tries them afresh.
        private func repairFailures(_ report: JournalHealth, service: FolderService) async throws {
            let flagged = Set((report.findings ?? []).filter { [.runsFailing, .failuresGrowing].contains($0.kind) }.map(\.subject))
            let held = (report.findings ?? []).filter { $0.kind == .held }.map(\.subject)
            var lines: [String] = []
            if !flagged.isEmpty {
                for pair in service.recorded.pairs where flagged.contains(pair.name) {
                    let reset = try await service.retry(in: pair, paths: nil)
                    lines.append("repair: \(pair.name): \(Plural.count(reset.count, "failed file")) made pending again; the next run tries them")
                }
            }
            for folder in held {
                lines.append("repair: \(folder): held; not accepted here: look at the folder, then run it with --accept-changes if the change is wanted")
            }
            if lines.isEmpty { lines.append("repair: nothing doctor can fix") }
            if global.json {
                var object = JSONObject()
                object.add("event", "repair")
                object.add("actions", lines.map { String($0.dropFirst("repair: ".count)) })
                StandardStreams.output(object.text)
            } else {
                for line in lines { StandardStreams.output(line) }
            }
        }
    }
}

/// What the schedules promise: each scheduled folder should have a run that went through
/// within two of its schedule's periods (`HealthCheck.overdue`).
enum ScheduleExpectations {
    static func of(_ config: Config, now: Date) -> [HealthCheck.Expectation] {
        var result: [HealthCheck.Expectation] = []
        for entry in config.schedules {
            let period: Double
            switch entry.trigger {
            case let .every(interval):
                period = interval.inSeconds
            case let .cron(expression):
                let calendar = Calendar.current
                guard let next = expression.nextTime(after: now, calendar: calendar),
                      let after = expression.nextTime(after: next, calendar: calendar) else { continue }
                period = after.timeIntervalSince(next)
            }
            let folders = entry.folder.map { [$0] } ?? config.folders.filter { $0.mode == entry.mode }.map(\.name)
            for folder in folders {
                result.append(HealthCheck.Expectation(folder: folder, schedule: entry.action + " " + Self.when(entry.trigger),
                                                      maxGap: 2 * period))
            }
        }
        return result
    }

    private static func when(_ trigger: ScheduleEntry.Trigger) -> String {
        switch trigger {
        case let .every(interval): "every \(Int64(interval.inSeconds)) s"
        case let .cron(expression): "cron \(expression.description)"
        }
    }
}

/// `ferry doctor --cleanup`: every configured folder that sends (push, sync) has its
/// remote's unfinished uploads aborted, except those its journal means to continue
/// (`AbandonedUploadSweep`) and those of a folder a process is syncing now.
struct AbandonedUploadCleanup {
    var context: CommandContext
    var journal: Journal?
    var olderThanSeconds: Int64
    var json: Bool

    func run() async throws {
        let selection = FolderSelection(config: context.config, registry: context.registry, currentDirectory: context.currentDirectory)
        let pairs = context.config.folders.isEmpty ? [] : try resolved(selection)
        if pairs.isEmpty { report(folder: nil, "cleanup: no configured folder sends to a remote") }
        var failed = false
        for pair in pairs where pair.mode != .pull {
            let record = try await journal?.findFolderPair(localRoot: pair.localRoot, remoteLocation: pair.remoteLocation)
            if let id = record?.id, let holder = RunLock.holder(stateDirectory: context.stateDirectory, pairId: id) {
                report(folder: pair.name, "\(pair.name): left alone, a run is under way (\(holder))")
                continue
            }
            do {
                var keeping: Set<RelativePath> = []
                if let journal, let id = record?.id {
                    keeping = try await AbandonedUploadSweep.keeping(journal, pairId: id, remoteRoot: pair.remoteRoot)
                }
                let aborted = try await pair.backend.abortAbandonedUploads(below: pair.remoteRoot, keeping: keeping,
                                                                           olderThanSeconds: olderThanSeconds)
                report(folder: pair.name, aborted: aborted, kept: keeping.count)
            } catch {
                failed = true
                report(folder: pair.name, "\(pair.name): cannot clean up \(pair.backend.displayName): \(error)")
            }
        }
        if failed { throw ExitCodeFailure.someFilesFailed }
    }

    private func resolved(_ selection: FolderSelection) throws -> [FolderPair] {
        do {
            return try selection.resolveAnyMode(folder: nil, remote: nil)
        } catch {
            throw CommandFailure.usage(error.message)
        }
    }

    private func report(folder: String?, aborted: [AbandonedUpload], kept: Int) {
        guard !json else {
            var object = JSONObject()
            object.add("event", "cleanup")
            object.add("folder", folder)
            object.add("aborted_uploads", aborted.map(\.path.string))
            object.add("kept_for_resume", kept)
            StandardStreams.output(object.text)
            return
        }
        let name = folder ?? ""
        StandardStreams.output("\(name): aborted \(aborted.count) unfinished upload(s)"
            + (kept > 0 ? "; \(kept) file(s) with a partial transfer the next run continues were left alone" : ""))
        for upload in aborted.prefix(20) { StandardStreams.output("    \(upload.path.string)") }
        if aborted.count > 20 { StandardStreams.output("    … and \(aborted.count - 20) more") }
    }

    private func report(folder: String?, _ message: String) {
        guard json else {
            StandardStreams.output(message)
            return
        }
        var object = JSONObject()
        object.add("event", "cleanup")
        object.add("folder", folder)
        object.add("message", message)
        StandardStreams.output(object.text)
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

    static func examine(_ journal: Journal, state: StateFolder, now: Double, offlineAlert: Double = 0.1,
                        expectations: [HealthCheck.Expectation] = []) async throws -> JournalHealth {
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
                                           holder: RunLock.holder(stateDirectory: state.directory, pairId: id)))
        }
        var findings: [HealthCheck.Finding]?
        if let history = try? await state.existingHistory() {
            let runs = (try? await history.runs(since: now - 7 * HealthCheck.day, limit: 100_000)) ?? []
            let outages = (try? await history.outages(since: now - HealthCheck.day)) ?? []
            findings = HealthCheck.examine(runs: runs, outages: outages, waiting: waiting, now: now, offlineAlert: offlineAlert,
                                           expectations: expectations)
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
