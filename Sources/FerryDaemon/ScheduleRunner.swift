import FerryConfig
import FerryPluginAPI
import FerrySystem
import Foundation
import Logging
import ServiceLifecycle

/// Starts the `schedule:` entries' runs when they are due (`ScheduleBook` decides when),
/// and remembers each entry's last start in `schedule-state.json` in the state folder, so
/// a run missed while Ferry was stopped happens once at the next start.
public struct ScheduleRunner: Service {
    public let entries: [ScheduleEntry]
    private let stateFile: String
    private let runners: @Sendable (ScheduleEntry) async -> [PairRunner]
    private let board: DaemonStatusBoard
    private let logger: Logger
    private let clock: any FerryClock

    public static let stateFileName = "schedule-state.json"

    public init(entries: [ScheduleEntry], stateDirectory: String, board: DaemonStatusBoard, logger: Logger,
                clock: any FerryClock, runners: @escaping @Sendable (ScheduleEntry) async -> [PairRunner]) {
        self.entries = entries
        self.clock = clock
        stateFile = LocalFileSystem.join(stateDirectory, Self.stateFileName)
        self.board = board
        self.logger = logger
        self.runners = runners
    }

    /// The last starts recorded by an earlier process (none when the file is missing or
    /// unreadable: then cron entries wait for their next time, intervals run now).
    public static func loadLastRuns(from path: String) -> [String: Date] {
        guard let data = FileManager.default.contents(atPath: path),
              let seconds = try? JSONDecoder().decode([String: Double].self, from: data) else { return [:] }
        return seconds.mapValues { Date(timeIntervalSince1970: $0) }
    }

    static func saveLastRuns(_ runs: [String: Date], to path: String) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        guard let data = try? encoder.encode(runs.mapValues(\.timeIntervalSince1970)) else { return }
        try? data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    public func run() async {
        guard !entries.isEmpty else { return }
        var book = ScheduleBook(entries: entries, lastRuns: Self.loadLastRuns(from: stateFile),
                                calendar: .current, startedAt: clock.wallDate())
        while !Task.isCancelled {
            let now = clock.wallDate()
            let due = book.takeDue(at: now)
            if !due.isEmpty { Self.saveLastRuns(book.lastRuns, to: stateFile) }
            for entry in due {
                let targets = await runners(entry)
                logger.info("schedule due", metadata: ["run": "\(entry.action)", "folders": "\(targets.count)"])
                for runner in targets {
                    await runner.request(RunRequest(reason: "schedule: \(entry.action)", queues: entry.queues.map(Set.init)))
                }
            }
            board.setSchedules(entries.map { entry in
                DaemonSnapshot.ScheduleState(action: entry.action, trigger: entry.triggerText,
                                             next: book.nextDue(entry), lastRun: book.lastRuns[entry.key])
            })
            // Wake at the next due time, and at least once a minute: the wall clock can
            // jump (suspend, NTP), and a sleeping process must notice it overslept.
            let wait = min(60, max(0.05, (book.nextWake?.timeIntervalSince(clock.wallDate()) ?? 60)))
            await clock.sleep(for: wait)
        }
    }
}

extension ScheduleEntry {
    /// `every 4h` or `cron 0 2 * * *`, for the status.
    public var triggerText: String {
        switch trigger {
        case let .every(interval): "every " + Self.shortText(interval)
        case let .cron(expression): "cron \(expression.description)"
        }
    }

    /// `4h`, `30m`, `1d`, `90s`: how config.yml says it.
    static func shortText(_ interval: Duration) -> String {
        let seconds = interval.components.seconds
        for (unit, size) in [("d", Int64(86_400)), ("h", 3_600), ("m", 60)] where seconds >= size && seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }
}
