import Foundation

/// A five-field cron expression (`minute hour day-of-month month day-of-week`) in local
/// time, as crontab(5) reads it: `*`, numbers, ranges `a-b`, lists `a,b`, steps `*/n` and
/// `a-b/n`; day of week 0–7 with 0 and 7 both Sunday; when both day fields are restricted,
/// a day matching either one runs (Vixie cron's rule).
public struct CronExpression: Sendable, Equatable, CustomStringConvertible {
    public let minutes: Set<Int>
    public let hours: Set<Int>
    public let daysOfMonth: Set<Int>
    public let months: Set<Int>
    public let daysOfWeek: Set<Int>
    private let dayOfMonthRestricted: Bool
    private let dayOfWeekRestricted: Bool
    public let description: String

    public init(_ text: String) throws(ScheduleError) {
        let fields = text.split(whereSeparator: \.isWhitespace).map(String.init)
        guard fields.count == 5 else {
            throw ScheduleError("a cron expression has 5 fields (minute hour day month weekday), such as \"0 2 * * *\"; found \(fields.count)")
        }
        minutes = try Self.field(fields[0], name: "minute", range: 0...59)
        hours = try Self.field(fields[1], name: "hour", range: 0...23)
        daysOfMonth = try Self.field(fields[2], name: "day of month", range: 1...31)
        months = try Self.field(fields[3], name: "month", range: 1...12)
        daysOfWeek = Set(try Self.field(fields[4], name: "day of week", range: 0...7).map { $0 % 7 })
        dayOfMonthRestricted = !fields[2].hasPrefix("*")
        dayOfWeekRestricted = !fields[4].hasPrefix("*")
        description = fields.joined(separator: " ")
    }

    private static func field(_ text: String, name: String, range: ClosedRange<Int>) throws(ScheduleError) -> Set<Int> {
        var values: Set<Int> = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: "/", omittingEmptySubsequences: false)
            guard pieces.count <= 2, let base = pieces.first else { throw invalid(text, name, range) }
            var step = 1
            if pieces.count == 2 {
                guard let parsed = Int(pieces[1]), parsed > 0 else { throw invalid(text, name, range) }
                step = parsed
            }
            var lower = range.lowerBound
            var upper = range.upperBound
            if base != "*" {
                let bounds = base.split(separator: "-", omittingEmptySubsequences: false)
                guard (1...2).contains(bounds.count), let first = Int(bounds[0]) else { throw invalid(text, name, range) }
                lower = first
                upper = first
                if bounds.count == 2 {
                    guard let last = Int(bounds[1]) else { throw invalid(text, name, range) }
                    upper = last
                } else if pieces.count == 2 {
                    upper = range.upperBound
                }
            }
            guard range.contains(lower), range.contains(upper), lower <= upper else {
                throw ScheduleError("cron \(name) '\(text)' is outside \(range.lowerBound)-\(range.upperBound)")
            }
            values.formUnion(stride(from: lower, through: upper, by: step))
        }
        return values
    }

    private static func invalid(_ text: String, _ name: String, _ range: ClosedRange<Int>) -> ScheduleError {
        ScheduleError("cron \(name) '\(text)' is not valid (use *, N, A-B, A,B or */N within \(range.lowerBound)-\(range.upperBound))")
    }

    private func matchesDay(_ day: Int, weekday: Int) -> Bool {
        let byMonthDay = daysOfMonth.contains(day)
        let byWeekday = daysOfWeek.contains(weekday)
        if dayOfMonthRestricted && dayOfWeekRestricted { return byMonthDay || byWeekday }
        return byMonthDay && byWeekday
    }

    /// The first matching minute strictly after `date`, in `calendar`'s time zone; nil if
    /// none within eight years (an expression such as `0 0 31 2 *` never matches).
    public func nextTime(after date: Date, calendar: Calendar) -> Date? {
        guard var current = calendar.date(bySetting: .second, value: 0, of: date) else { return nil }
        if current <= date { current = current.addingTimeInterval(60) }
        // Whole days are skipped while the day does not match, so this ends quickly even
        // for rare expressions.
        let limit = date.addingTimeInterval(8 * 366 * 86_400)
        while current < limit {
            let parts = calendar.dateComponents([.month, .day, .weekday, .hour, .minute], from: current)
            guard let month = parts.month, let day = parts.day, let weekday = parts.weekday,
                  let hour = parts.hour, let minute = parts.minute else { return nil }
            if !months.contains(month) || !matchesDay(day, weekday: weekday - 1) {
                guard let nextDay = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: current)) else { return nil }
                current = nextDay
                continue
            }
            if !hours.contains(hour) {
                guard let startOfHour = calendar.date(bySettingHour: hour, minute: 0, second: 0, of: current),
                      let nextHour = calendar.date(byAdding: .hour, value: 1, to: startOfHour) else { return nil }
                current = nextHour
                continue
            }
            if minutes.contains(minute) { return current }
            current = current.addingTimeInterval(60)
        }
        return nil
    }
}

/// A schedule or bandwidth timetable that does not parse.
public struct ScheduleError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
