import FerryConfig
import Foundation

/// When each schedule entry runs next, from when it last ran: pure logic, with the time
/// passed in, so tests cover days of schedules in microseconds.
///
/// - `every`: due `interval` after its last run; an entry that never ran is due at once.
/// - `cron`: due at the first matching minute after its last run; one that never ran
///   waits for its first matching minute from when the book was made.
/// - Missed runs (the machine slept, Ferry was stopped): an overdue entry runs once, now,
///   and its next time counts from that run, never once per missed slot.
public struct ScheduleBook: Sendable {
    public let entries: [ScheduleEntry]
    /// When each entry (by `ScheduleEntry.key`) last started.
    public private(set) var lastRuns: [String: Date]
    private let calendar: Calendar
    private let startedAt: Date

    public init(entries: [ScheduleEntry], lastRuns: [String: Date], calendar: Calendar, startedAt: Date) {
        self.entries = entries
        self.lastRuns = lastRuns
        self.calendar = calendar
        self.startedAt = startedAt
    }

    /// When the entry is due next (possibly in the past: it is overdue).
    public func nextDue(_ entry: ScheduleEntry) -> Date? {
        let last = lastRuns[entry.key]
        switch entry.trigger {
        case let .every(interval):
            guard let last else { return startedAt }
            return last.addingTimeInterval(interval.inSeconds)
        case let .cron(expression):
            return expression.nextTime(after: last ?? startedAt, calendar: calendar)
        }
    }

    /// The earliest moment any entry is due.
    public var nextWake: Date? {
        entries.compactMap(nextDue).min()
    }

    /// The entries due at `now`, each once however many runs it missed, marked as run now.
    public mutating func takeDue(at now: Date) -> [ScheduleEntry] {
        var due: [ScheduleEntry] = []
        for entry in entries {
            guard let next = nextDue(entry), next <= now, !due.contains(entry) else { continue }
            due.append(entry)
        }
        for entry in due { lastRuns[entry.key] = now }
        return due
    }
}
