import FerryJournal
import Foundation

/// `ferry doctor`'s health report from the run history: trends a single run cannot show.
/// Pure: the history's rows, the journal's waiting files and the time are passed in.
public enum HealthCheck {
    /// Files waiting in one folder's queue, and since when the oldest has waited.
    public struct WaitingQueue: Sendable, Equatable {
        public var folder: String
        public var queue: String
        public var files: Int
        /// The oldest waiting file's last change in the journal (seconds since 1970).
        public var oldestSince: Double

        public init(folder: String, queue: String, files: Int, oldestSince: Double) {
            self.folder = folder
            self.queue = queue
            self.files = files
            self.oldestSince = oldestSince
        }
    }

    public struct Finding: Sendable, Equatable {
        public enum Kind: String, Sendable {
            case failuresGrowing = "failures-growing"
            case queueStalled = "queue-stalled"
            case remoteOffline = "remote-offline"
            case journalGrowing = "journal-growing"
            case held
            case overdue
            case runsFailing = "runs-failing"
        }

        public var kind: Kind
        /// The folder, queue or remote it is about.
        public var subject: String
        public var message: String
    }

    public static let day: Double = 86_400

    /// A folder a schedule runs, and the longest it may go without a run that went
    /// through: two of the schedule's periods (one missed run is a busy machine; two are
    /// a daemon that is not running, a folder held or paused, a remote gone).
    public struct Expectation: Sendable, Equatable {
        public var folder: String
        public var schedule: String
        public var maxGap: Double

        public init(folder: String, schedule: String, maxGap: Double) {
            self.folder = folder
            self.schedule = schedule
            self.maxGap = maxGap
        }
    }

    public static func examine(runs: [RunRecord], outages: [OutageRecord], waiting: [WaitingQueue], now: Double,
                               offlineAlert: Double, journalMinimumBytes: Int64 = 1 << 20,
                               expectations: [Expectation] = []) -> [Finding] {
        held(runs)
            + overdue(runs, expectations: expectations, now: now)
            + runsFailing(runs, now: now)
            + failuresGrowing(runs, now: now)
            + queuesStalled(runs, waiting: waiting, now: now)
            + remotesOffline(runs, outages: outages, now: now, alert: offlineAlert)
            + journalGrowing(runs, minimumBytes: journalMinimumBytes)
    }

    /// A folder whose last run was held (`ChangeHold`) and has not gone through since.
    static func held(_ runs: [RunRecord]) -> [Finding] {
        var last: [String: RunRecord] = [:]
        for run in runs where run.outcome != "stopped" {
            if let seen = last[run.folder], seen.endedAt >= run.endedAt { continue }
            last[run.folder] = run
        }
        return last.keys.sorted().compactMap { folder in
            guard let run = last[folder], let error = run.error, error.hasPrefix("held:") else { return nil }
            return Finding(kind: .held, subject: folder,
                           message: "\(folder): held since its \(run.mode) run at \(Self.time(run.endedAt)) (\(error.dropFirst("held: ".count))); "
                               + "look at the folder first; if the change is wanted, ferry \(run.mode) \(folder) --accept-changes")
        }
    }

    /// A scheduled folder with no run that went through for longer than its expectation.
    static func overdue(_ runs: [RunRecord], expectations: [Expectation], now: Double) -> [Finding] {
        var lastGood: [String: Double] = [:]
        for run in runs where run.outcome == "ok" { lastGood[run.folder] = max(lastGood[run.folder] ?? 0, run.endedAt) }
        var reported: Set<String> = []
        return expectations.compactMap { expectation in
            guard !reported.contains(expectation.folder) else { return nil }
            let since = lastGood[expectation.folder]
            guard now - (since ?? 0) > expectation.maxGap else { return nil }
            // A folder never run at all is overdue only once the history is old enough to say so.
            guard since != nil || runs.contains(where: { $0.endedAt < now - expectation.maxGap }) else { return nil }
            reported.insert(expectation.folder)
            let last = since.map { "its last run that went through ended \(Self.time($0))" } ?? "no run of it went through in the history"
            return Finding(kind: .overdue, subject: expectation.folder,
                           message: "\(expectation.folder): not synced for longer than its schedule (\(expectation.schedule)) allows; \(last); "
                               + "is the daemon running (ferry status), the folder paused or held?")
        }
    }

    /// Most runs of a folder in the last day failed as a whole (at least three of them);
    /// held runs have their own finding.
    static func runsFailing(_ runs: [RunRecord], now: Double) -> [Finding] {
        var total: [String: Int] = [:]
        var failed: [String: Int] = [:]
        for run in runs where run.endedAt >= now - day && run.outcome != "stopped" {
            total[run.folder, default: 0] += 1
            if run.outcome == "error", !(run.error?.hasPrefix("held:") ?? false) { failed[run.folder, default: 0] += 1 }
        }
        return total.keys.sorted().compactMap { folder in
            let count = failed[folder] ?? 0, all = total[folder] ?? 0
            guard count >= 3, count * 2 > all else { return nil }
            return Finding(kind: .runsFailing, subject: folder,
                           message: "\(folder): \(count) of its \(all) runs in the last day failed as a whole; ferry history \(folder) shows why")
        }
    }

    static func time(_ seconds: Double) -> String {
        Date(timeIntervalSince1970: seconds).ISO8601Format()
    }

    /// Failures (retried attempts and files failed for good) of the last day against the
    /// day before: more, and at least 2.
    static func failuresGrowing(_ runs: [RunRecord], now: Double) -> [Finding] {
        var recent: [String: Int] = [:]
        var earlier: [String: Int] = [:]
        for run in runs {
            let failures = run.retriedFailures + run.permanentFailures
            if run.endedAt >= now - day {
                recent[run.folder, default: 0] += failures
            } else if run.endedAt >= now - 2 * day {
                earlier[run.folder, default: 0] += failures
            }
        }
        return recent.keys.sorted().compactMap { folder in
            let last = recent[folder] ?? 0, before = earlier[folder] ?? 0
            guard last >= 2, last > before else { return nil }
            return Finding(kind: .failuresGrowing, subject: folder,
                           message: "\(folder): \(last) failures in the last day, \(before) the day before; ferry status \(folder) --errors lists them")
        }
    }

    /// Files have waited in a queue for over a day and no run moved a file of that queue
    /// in that day.
    static func queuesStalled(_ runs: [RunRecord], waiting: [WaitingQueue], now: Double) -> [Finding] {
        waiting.compactMap { queue in
            guard queue.files > 0, queue.oldestSince < now - day else { return nil }
            let moved = runs.contains { run in
                run.folder == queue.folder && run.endedAt >= now - day
                    && run.moved.contains { $0.queue == queue.queue && $0.files > 0 }
            }
            guard !moved else { return nil }
            let hours = Int((now - queue.oldestSince) / 3600)
            return Finding(kind: .queueStalled, subject: "\(queue.folder)/\(queue.queue)",
                           message: "\(queue.folder): queue \(queue.queue) has not moved for \(hours) h (\(queue.files) files waiting); is the daemon running, the folder paused, or the remote refusing?")
        }
    }

    /// A remote did not answer for more than `alert` of the last day: by the daemon's
    /// outages, or by the offline time its runs recorded, whichever is more.
    static func remotesOffline(_ runs: [RunRecord], outages: [OutageRecord], now: Double, alert: Double) -> [Finding] {
        var seconds: [String: Double] = [:]
        for outage in outages {
            let start = max(outage.startedAt, now - day), end = min(outage.endedAt ?? now, now)
            if end > start { seconds[outage.remote, default: 0] += end - start }
        }
        var fromRuns: [String: Double] = [:]
        for run in runs where run.endedAt >= now - day {
            fromRuns[run.remote, default: 0] += run.offlineSeconds
        }
        for (remote, value) in fromRuns { seconds[remote] = max(seconds[remote] ?? 0, value) }
        return seconds.keys.sorted().compactMap { remote in
            let share = min(1, (seconds[remote] ?? 0) / day)
            guard share > alert else { return nil }
            return Finding(kind: .remoteOffline, subject: remote,
                           message: "remote \(remote) was offline \(Int((share * 100).rounded()))% of the last day (alert above \(Int((alert * 100).rounded()))%)")
        }
    }

    /// The journal's bytes per tracked file grew by more than half between the oldest and
    /// the newest run of the history (and the journal is worth looking at).
    static func journalGrowing(_ runs: [RunRecord], minimumBytes: Int64) -> [Finding] {
        let measured = runs.filter { $0.trackedFiles > 0 && $0.journalBytes > 0 }.sorted { $0.endedAt < $1.endedAt }
        guard let first = measured.first, let last = measured.last, last.endedAt > first.endedAt,
              last.journalBytes >= minimumBytes else { return [] }
        let journalGrowth = Double(last.journalBytes) / Double(first.journalBytes)
        let filesGrowth = Double(last.trackedFiles) / Double(first.trackedFiles)
        guard journalGrowth > filesGrowth * 1.5 else { return [] }
        return [Finding(kind: .journalGrowing, subject: "journal",
                        message: String(format: "the journal grew %.1f× while the files it tracks grew %.1f×; a checkpoint or VACUUM may be due (stop the daemon, then sqlite3 journal.sqlite VACUUM)",
                                        journalGrowth, filesGrowth))]
    }
}
