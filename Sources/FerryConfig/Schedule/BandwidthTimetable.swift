import FerryPluginAPI
import Foundation

/// A bandwidth limit that changes by time of day: `08:00,1M 18:00,5M 23:00,off` means 1 MB/s
/// from 08:00, 5 MB/s from 18:00, no limit from 23:00 until 08:00 the next day. A single
/// rate (`5M`, `off`) is a timetable with one constant entry. Local time.
public struct BandwidthTimetable: Sendable, Equatable, CustomStringConvertible {
    public struct Slot: Sendable, Equatable {
        /// Minutes after midnight.
        public var minuteOfDay: Int
        /// Bytes per second; nil for no limit.
        public var bytesPerSecond: Int64?
    }

    /// Sorted by time of day.
    public let slots: [Slot]
    public let description: String

    public init(_ text: String) throws(ScheduleError) {
        let parts = text.split(whereSeparator: \.isWhitespace).map(String.init)
        guard !parts.isEmpty else { throw ScheduleError("expected a rate such as 5M or off, or a timetable such as \"08:00,1M 23:00,off\"") }
        if parts.count == 1, !parts[0].contains(",") {
            slots = [Slot(minuteOfDay: 0, bytesPerSecond: try Self.rate(parts[0]))]
            description = text
            return
        }
        var slots: [Slot] = []
        for part in parts {
            let pieces = part.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard pieces.count == 2 else {
                throw ScheduleError("'\(part)' is not TIME,RATE; write the timetable as \"08:00,1M 18:00,5M 23:00,off\"")
            }
            let clock = pieces[0].split(separator: ":", omittingEmptySubsequences: false)
            guard clock.count == 2, clock[1].count == 2, let hour = Int(clock[0]), let minute = Int(clock[1]),
                  (0...23).contains(hour), (0...59).contains(minute) else {
                throw ScheduleError("'\(pieces[0])' is not a time of day such as 08:00 or 23:30")
            }
            let slot = Slot(minuteOfDay: hour * 60 + minute, bytesPerSecond: try Self.rate(pieces[1]))
            guard !slots.contains(where: { $0.minuteOfDay == slot.minuteOfDay }) else {
                throw ScheduleError("\(pieces[0]) appears twice in the timetable")
            }
            slots.append(slot)
        }
        self.slots = slots.sorted { $0.minuteOfDay < $1.minuteOfDay }
        description = text
    }

    private static func rate(_ text: String) throws(ScheduleError) -> Int64? {
        if text == "off" || text == "0" { return nil }
        guard let bytes = Quantity.bytes(text), bytes > 0 else {
            throw ScheduleError("'\(text)' is not a rate such as 512k, 5M or off")
        }
        return bytes
    }

    /// The limit in force at `date`: the last slot at or before its time of day, or the
    /// day's last slot (carried over from the evening before) before the first one.
    public func rate(at date: Date, calendar: Calendar) -> Int64? {
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        let minute = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        return (slots.last { $0.minuteOfDay <= minute } ?? slots.last)?.bytesPerSecond
    }

    /// The next moment after `date` at which the limit may change; nil for a constant limit.
    public func nextChange(after date: Date, calendar: Calendar) -> Date? {
        guard slots.count > 1 else { return nil }
        let start = calendar.startOfDay(for: date)
        for dayOffset in 0...1 {
            guard let day = calendar.date(byAdding: .day, value: dayOffset, to: start) else { return nil }
            for slot in slots {
                guard let moment = calendar.date(bySettingHour: slot.minuteOfDay / 60, minute: slot.minuteOfDay % 60,
                                                 second: 0, of: day) else { continue }
                if moment > date { return moment }
            }
        }
        return nil
    }
}
